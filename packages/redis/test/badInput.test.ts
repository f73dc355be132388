/**
 * Bad input to the Redis caches (issues 19 and 21): every duration option checked against what Node's timers and
 * Redis accept, plain-JS mistakes (`connect(undefined)`, a client that is not one), and clients that can never be
 * ready (a Cluster client of a server without cluster support, a Sentinel group nobody knows): a ConfigurationError
 * naming the option or a TokenCacheError that says why, at construction, never a TypeError or a hang.
 */
import { randomUUID } from "node:crypto"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Cluster, Redis } from "ioredis"
import { ConfigurationError, TokenCacheError, TokenInfo } from "@service-sdk/effect"
import { describeRedis, freePort } from "./support/redisServer.js"
import { startSentinels } from "./support/topology.js"

const fromPromise = <A>(f: () => Promise<A>) => Effect.promise(f)
const rejection = (promise: () => Promise<unknown>) =>
  fromPromise(() =>
    promise().then(
      (value) => ({ value }),
      (error: unknown) => ({ error })
    )
  )

describeRedis("bad input to the Redis caches", (server) => {
  const durationCases: ReadonlyArray<readonly [string, unknown]> = [
    ["commandTimeout", Infinity],
    ["commandTimeout", 3e9],
    ["commandTimeout", Number.NaN],
    ["commandTimeout", -1],
    ["commandTimeout", 0],
    ["commandTimeout", "0.1 nanos"],
    ["commandTimeout", "forever"],
    ["lockTtl", Infinity],
    ["lockTtl", 1e308],
    ["lockTtl", Number.NaN],
    ["lockTtl", -5],
    ["lockTtl", "30 days"],
    ["lockWait", Infinity],
    ["lockWait", "-1 seconds"],
    ["pollInterval", Number.NaN],
    ["pollInterval", 2 ** 31]
  ]

  it.live("every duration option: positive, finite, at most 2^31−1 ms, else a ConfigurationError naming it", () =>
    Effect.gen(function* () {
      for (const [option, value] of durationCases) {
        const cache = yield* Effect.flip(
          Effect.scoped(RedisTokenCache.make({ url: server().url, key: "k", [option]: value }))
        )
        expect(cache, `${option}: ${String(value)}`).toBeInstanceOf(ConfigurationError)
        expect(cache.message).toContain(option)
        const store = yield* Effect.flip(
          Effect.scoped(RedisTokenStore.make({ url: server().url, prefix: "p:", [option]: value }))
        )
        expect(store, `${option}: ${String(value)}`).toBeInstanceOf(ConfigurationError)
        expect(store.message).toContain(option)
        const connected = yield* rejection(() =>
          RedisTokenCache.connect({ url: server().url, key: "k", [option]: value })
        )
        expect("error" in connected && connected.error).toBeInstanceOf(ConfigurationError)
      }
      // the edges that are valid: 1 ms and 2^31−1 ms
      const edge = yield* Effect.scoped(
        Effect.flatMap(
          RedisTokenCache.make({
            url: server().url,
            key: `k:${randomUUID()}`,
            commandTimeout: 1000,
            lockTtl: 2 ** 31 - 1
          }),
          (cache) => Effect.as(cache.withLock!(Effect.void), "ok")
        )
      )
      expect(edge).toBe("ok")
    })
  )

  it.live("connect(undefined), connect({ client: {} }) and friends reject with ConfigurationError, not TypeError", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<() => Promise<unknown>> = [
        () => RedisTokenCache.connect(undefined as never),
        () => RedisTokenCache.connect(null as never),
        () => RedisTokenCache.connect("redis://127.0.0.1:6379" as never),
        () => RedisTokenCache.connect({ client: {} } as never),
        () => RedisTokenCache.connect({ client: {}, key: "k" } as never),
        () => RedisTokenCache.connect({ key: "k", url: 6379 } as never),
        () => RedisTokenCache.connect({ key: 42 } as never),
        () => RedisTokenStore.connect(undefined as never),
        () => RedisTokenStore.connect({ client: {} } as never),
        () => RedisTokenStore.connect({ client: {}, prefix: "p:" } as never),
        () => RedisTokenStore.connect({ client: { get: 1 }, prefix: "p:" } as never)
      ]
      for (const [index, call] of cases.entries()) {
        let thrown: unknown
        try {
          // a synchronous throw counts as well: "at construction"
          thrown = (yield* rejection(call)) as { error?: unknown }
        } catch (error) {
          thrown = { error }
        }
        const error = (thrown as { error?: unknown }).error
        expect(error, `case ${index}`).toBeInstanceOf(ConfigurationError)
        expect(error).not.toBeInstanceOf(TypeError)
      }
    })
  )

  it.live("a closed client is a ConfigurationError; a lazy one is connected before the first call", () =>
    Effect.gen(function* () {
      const closed = new Redis({ host: "127.0.0.1", port: server().port, lazyConnect: true })
      closed.disconnect()
      const error = yield* Effect.flip(Effect.scoped(RedisTokenCache.make({ client: closed, key: "k" })))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toMatch(/closed/)

      // the README's recipe: no offline queue; the first call works because make waits for `ready`
      const lazy = new Redis({
        host: "127.0.0.1",
        port: server().port,
        lazyConnect: true,
        enableOfflineQueue: false,
        commandTimeout: 2000,
        maxRetriesPerRequest: 0
      })
      const key = `k:${randomUUID()}`
      const read = yield* Effect.scoped(
        Effect.gen(function* () {
          const cache = yield* RedisTokenCache.make({ client: lazy, key })
          yield* cache.set(
            new TokenInfo({ accessToken: Redacted.make("lazy-token"), expiresAt: Date.now() / 1000 + 60 })
          )
          return yield* cache.get
        })
      )
      expect(Option.map(read, (token) => Redacted.value(token.accessToken))).toEqual(Option.some("lazy-token"))
      expect(lazy.status).toBe("ready")
      lazy.disconnect()
    })
  )

  it.live("a Cluster client that cannot become ready is a TokenCacheError within commandTimeout, not a hang", () =>
    Effect.gen(function* () {
      for (const port of [server().port /* no cluster support */, yield* fromPromise(freePort) /* nobody */]) {
        const cluster = new Cluster([{ host: "127.0.0.1", port }], {
          enableOfflineQueue: false,
          clusterRetryStrategy: (times) => Math.min(100 * times, 500)
        })
        cluster.on("error", () => {})
        const started = Date.now()
        const error = yield* Effect.flip(
          Effect.scoped(RedisTokenCache.make({ client: cluster, key: "k", commandTimeout: "1 second" }))
        )
        const took = Date.now() - started
        cluster.disconnect()
        expect(error).toBeInstanceOf(TokenCacheError)
        expect(error.message).toMatch(/Redis cluster is not ready after 1s/)
        expect(took).toBeLessThan(1000 + 2000)
      }
    })
  )

  it.live("a Sentinel group nobody knows is a TokenCacheError that says so, within commandTimeout", () =>
    Effect.promise(async () => {
      const group = await startSentinels(server().port, 1)
      if (group === undefined) return
      try {
        const client = new Redis({
          sentinels: [...group.sentinels],
          name: "no-such-master",
          enableOfflineQueue: false,
          sentinelRetryStrategy: (times: number) => Math.min(100 * times, 500)
        })
        client.on("error", () => {})
        const started = Date.now()
        const error = await Effect.runPromise(
          Effect.flip(Effect.scoped(RedisTokenStore.make({ client, prefix: "p:", commandTimeout: "1 second" })))
        )
        const took = Date.now() - started
        client.disconnect()
        expect(error).toBeInstanceOf(TokenCacheError)
        expect(error.message).toContain('"no-such-master"')
        expect(error.message).toMatch(/no sentinel knows the master name/)
        expect(took).toBeLessThan(1000 + 2000)
      } finally {
        await group.stop()
      }
    })
  )
})
