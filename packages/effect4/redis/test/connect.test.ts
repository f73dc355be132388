/**
 * Connecting: a TLS mismatch between the URL and the server is a ConfigurationError that names it, at once (not a
 * timeout); a missing `ioredis` peer is a ConfigurationError that says to install it (importing the package needs
 * none); a server whose eviction policy may evict the SDK's keys gets a warning naming the policy and the fix.
 */
import { randomUUID } from "node:crypto"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { ConfigurationError } from "@service-sdk/effect"
import { vi } from "vitest"
import { describeRedis } from "../../../redis/test/support/redisServer.js"
import { startTlsRedisServer, type TlsRedisServer } from "../../../redis/test/support/tlsServer.js"

/** Long enough that an answer within it is no timeout. */
const COMMAND_TIMEOUT_MS = 20_000

const connectError = (url: string) =>
  Effect.gen(function* () {
    const started = Date.now()
    const error = yield* Effect.flip(
      Effect.scoped(RedisTokenCache.make({ url, key: "test4:connect", commandTimeout: COMMAND_TIMEOUT_MS }))
    )
    return { error, took: Date.now() - started }
  })

describeRedis("connecting (Effect 4)", (server) => {
  let tls: TlsRedisServer | string = "not started"
  beforeAll(async () => {
    tls = await startTlsRedisServer()
    if (typeof tls === "string") console.warn(`\n*** SKIPPING the redis:// to a TLS server test: ${tls}. ***\n`)
  }, 60_000)
  afterAll(async () => {
    if (typeof tls !== "string") await tls.stop()
  })

  it.live("rediss:// to a plain server: a ConfigurationError that says so, long before the command timeout", () =>
    Effect.gen(function* () {
      const { error, took } = yield* connectError(server().url.replace("redis://", "rediss://"))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("speaks plain Redis")
      expect(error.message).toContain("use redis://")
      expect(took).toBeLessThan(COMMAND_TIMEOUT_MS / 2)
      const rejected = yield* Effect.promise(() =>
        RedisTokenCache.connect({ url: server().url.replace("redis://", "rediss://"), key: "test4:connect" }).then(
          () => undefined,
          (e: unknown) => e
        )
      )
      expect(rejected).toBeInstanceOf(ConfigurationError)
    })
  )

  it.live("redis:// to a TLS server: a ConfigurationError that says so", ({ skip }) =>
    Effect.gen(function* () {
      if (typeof tls === "string") return skip()
      const { error, took } = yield* connectError(`redis://127.0.0.1:${tls.port}`)
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("speaks TLS")
      expect(error.message).toContain("use rediss://")
      expect(took).toBeLessThan(COMMAND_TIMEOUT_MS / 2)
    })
  )

  describe("the eviction policy", () => {
    const policy = (value: string) => Effect.promise(() => server().admin.config("SET", "maxmemory-policy", value))
    afterEach(async () => {
      await server().admin.config("SET", "maxmemory-policy", "noeviction")
    })

    it.live("make warns about an allkeys-* policy, naming it and the fix; noeviction and volatile-* are quiet", () =>
      Effect.gen(function* () {
        const warnings = (value: string) =>
          Effect.gen(function* () {
            yield* policy(value)
            const lines: Array<string> = []
            const capture = Logger.make(({ logLevel, message }) => {
              lines.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
            })
            yield* Effect.scoped(RedisTokenCache.make({ url: server().url, key: `test4:evict:${randomUUID()}` })).pipe(
              Effect.provide(Logger.layer([capture]))
            )
            return lines.filter((line) => line.startsWith("Warn"))
          })
        for (const evicting of ["allkeys-lru", "allkeys-lfu", "allkeys-random"]) {
          const lines = yield* warnings(evicting)
          expect(lines).toHaveLength(1)
          expect(lines[0]).toContain(`maxmemory-policy ${evicting}`)
          expect(lines[0]).toContain("noeviction")
          expect(lines[0]).toContain(server().url.replace("redis://", ""))
        }
        for (const quiet of ["noeviction", "volatile-lru", "volatile-ttl"]) expect(yield* warnings(quiet)).toEqual([])
      })
    )
  })
})

describe("a missing ioredis (Effect 4)", () => {
  it.live("the package imports without it; a url is a ConfigurationError that says to install it", () =>
    Effect.gen(function* () {
      vi.resetModules()
      vi.doMock("ioredis", () => {
        throw Object.assign(new Error("Cannot find package 'ioredis' imported from the app"), {
          code: "ERR_MODULE_NOT_FOUND"
        })
      })
      try {
        const fresh = yield* Effect.promise(() => import("@service-sdk/redis"))
        const error = yield* Effect.flip(
          Effect.scoped(fresh.RedisTokenCache.make({ url: "redis://127.0.0.1:9", key: "test4:peer" }))
        )
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toContain("npm install ioredis@5")
        const rejected = yield* Effect.promise(() =>
          fresh.RedisTokenStore.connect({ url: "redis://127.0.0.1:9", prefix: "test4:peer:" }).then(
            () => undefined,
            (e: unknown) => e as { _tag?: string; message?: string }
          )
        )
        expect(rejected?._tag).toBe("ConfigurationError")
        expect(rejected?.message).toContain("npm install ioredis@5")
      } finally {
        vi.doUnmock("ioredis")
        vi.resetModules()
      }
    })
  )
})
