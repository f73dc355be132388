/**
 * Redis neighbours (issue 28): a key the SDK would use that holds another application's value (another type, or a
 * string that is not a token entry or a lock of ours) is a TokenCacheError naming the key, and the value is never
 * deleted, re-timed or overwritten: not by the lock, not by a read, a write, a compare-and-set, a sign-in or a
 * sign-out. And `connect` warns when the server's eviction policy may evict the SDK's keys.
 */
import { randomUUID } from "node:crypto"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { afterEach, vi } from "vitest"
import { ClientCredentials, TokenCacheError, TokenInfo, UserTokens } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { describeRedis } from "./support/redisServer.js"

const uniqueKey = () => `test:neighbours:${randomUUID()}`

const token = (accessToken: string, refreshToken?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    expiresAt: Date.now() / 1000 + 3600,
    ...(refreshToken === undefined ? {} : { refreshToken: Redacted.make(refreshToken) })
  })

const credentials = { clientId: "neighbour-client", clientSecret: "neighbour-secret", authUrl: "http://127.0.0.1:9" }

const Http = MockHttpClient.layer(() =>
  Effect.succeed(MockHttpClient.json({ access_token: "fresh-token", token_type: "Bearer", expires_in: 3600 }))
)

/** Another application's values, as `redis-cli` would plant them. */
const NEIGHBOURS = [
  { kind: "a string", plant: ["set", "session-data:not-ours"], read: ["get"] },
  { kind: "a JSON string without access_token", plant: ["set", '{"user":"u1","cart":[1,2]}'], read: ["get"] },
  { kind: "a hash", plant: ["hset", "field", "value"], read: ["hgetall"] },
  { kind: "a list", plant: ["rpush", "job-1"], read: ["lrange", "0", "-1"] }
] as const

describeRedis("Redis neighbours", (server) => {
  const admin = () => server().admin
  const call = (...args: ReadonlyArray<string | number>) =>
    Effect.promise(() => admin().call(String(args[0]), ...args.slice(1).map(String)))
  /** Plants a neighbour's value at `key` (no expiry); `snapshot` is what it holds and how long it lives. */
  const plant = (key: string, neighbour: (typeof NEIGHBOURS)[number]) =>
    Effect.asVoid(call(neighbour.plant[0], key, ...neighbour.plant.slice(1)))
  const snapshot = (key: string, neighbour: (typeof NEIGHBOURS)[number]) =>
    Effect.all({
      value: call(neighbour.read[0], key, ...neighbour.read.slice(1)),
      ttl: Effect.promise(() => admin().pttl(key))
    })
  const expectNamed = (error: unknown, key: string) => {
    expect(error).toBeInstanceOf(TokenCacheError)
    const message = (error as TokenCacheError).message
    expect(message).toContain(`"${key}"`)
    expect(message).toContain("another application's value")
  }

  for (const neighbour of NEIGHBOURS) {
    it.scopedLive(`a lock key holding ${neighbour.kind} without a TTL: a TokenCacheError at once, left alone`, () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        yield* plant(lockKey, neighbour)
        const before = yield* snapshot(lockKey, neighbour)
        expect(before.ttl).toBe(-1)
        // lockWait long: the answer must not be a timeout
        const tokens = yield* RedisTokenCache.make({ url: server().url, key, lockWait: "20 seconds" })
        const ran = yield* Ref.make(false)
        const started = Date.now()
        const error = yield* Effect.flip(tokens.withLock!(Ref.set(ran, true)))
        expect(Date.now() - started).toBeLessThan(10_000)
        expectNamed(error, lockKey)
        expect(error.message).not.toContain("gave up waiting")
        expect(yield* Ref.get(ran)).toBe(false)
        // a while later (any TTL it had been given would show, and a deletion)
        yield* Effect.sleep("300 millis")
        expect(yield* snapshot(lockKey, neighbour)).toEqual(before)
      })
    )

    it.scopedLive(`an entry key holding ${neighbour.kind}: get, set, compareAndSet and clear fail naming it`, () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        yield* plant(key, neighbour)
        const before = yield* snapshot(key, neighbour)
        const tokens = yield* RedisTokenCache.make({ url: server().url, key })
        expectNamed(yield* Effect.flip(tokens.get), key)
        expectNamed(yield* Effect.flip(tokens.set(token("mine", "rt-mine"))), key)
        expectNamed(yield* Effect.flip(tokens.set(token("mine-without-refresh"))), key)
        expectNamed(yield* Effect.flip(tokens.compareAndSet!(Option.none(), token("mine", "rt-mine"))), key)
        expectNamed(yield* Effect.flip(tokens.clear!), key)
        expect(yield* snapshot(key, neighbour)).toEqual(before)
      })
    )
  }

  it.scopedLive(
    "UserTokens.signIn and signOut over another application's hash at the user's key: a TokenCacheError",
    () =>
      Effect.gen(function* () {
        const prefix = `test:neighbours:${randomUUID()}:`
        const key = RedisTokenStore.userKey(prefix, "alice")
        yield* call("hset", key, "theme", "dark", "language", "fr")
        const store = yield* RedisTokenStore.make({ url: server().url, prefix })
        const users = yield* UserTokens.make({ ...credentials, store })
        expectNamed(yield* Effect.flip(users.signIn("alice", token("alice-at", "alice-rt"))), key)
        // another process of the app, that has no token of alice's in memory
        const other = yield* UserTokens.make({ ...credentials, store })
        expectNamed(yield* Effect.flip(other.provider("alice").getAccessToken), key)
        expectNamed(yield* Effect.flip(users.signOut("alice")), key)
        expect(yield* call("hgetall", key)).toEqual({ theme: "dark", language: "fr" })
        expect(yield* Effect.promise(() => admin().pttl(key))).toBe(-1)
        // another user of the same store is not affected
        yield* users.signIn("bob", token("bob-at", "bob-rt"))
        expect(Redacted.value(yield* users.provider("bob").getAccessToken)).toBe("bob-at")
      }).pipe(Effect.provide(Http))
  )

  it.scopedLive("a provider over another application's value renews without the cache and never touches it", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      yield* call("set", key, "not-a-token")
      const tokenCache = yield* RedisTokenCache.make({ url: server().url, key })
      const provider = yield* ClientCredentials.make({ ...credentials, tokenCache })
      const logs = yield* Ref.make<ReadonlyArray<string>>([])
      const logger = Logger.make(({ message }) => Effect.runSync(Ref.update(logs, (all) => [...all, String(message)])))
      const served = yield* provider.getAccessToken.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(Redacted.value(served)).toBe("fresh-token")
      expect((yield* Ref.get(logs)).some((line) => line.includes(`"${key}"`))).toBe(true)
      expect(yield* call("get", key)).toBe("not-a-token")
      expect(yield* Effect.promise(() => admin().pttl(key))).toBe(-1)
    }).pipe(Effect.provide(Http))
  )

  it.scopedLive(
    "a lock of ours taken over by another application's value while held is neither extended nor deleted",
    () =>
      Effect.gen(function* () {
        const key = uniqueKey()
        const lockKey = RedisTokenCache.lockKey(key)
        const tokens = yield* RedisTokenCache.make({ url: server().url, key, lockTtl: "300 millis" })
        yield* tokens.withLock!(
          Effect.zipRight(
            call("set", lockKey, "their-lock-value"),
            // a few heartbeats
            Effect.sleep("400 millis")
          )
        )
        yield* Effect.sleep("100 millis")
        expect(yield* call("get", lockKey)).toBe("their-lock-value")
        expect(yield* Effect.promise(() => admin().pttl(lockKey))).toBe(-1)
      })
  )

  describeEviction(server)
})

/** The eviction policy: a warning naming the policy and the fix when it may evict the SDK's keys, else none. */
function describeEviction(server: () => { readonly url: string; readonly admin: import("ioredis").Redis }) {
  const policy = (value: string) => Effect.promise(() => server().admin.config("SET", "maxmemory-policy", value))
  afterEach(async () => {
    vi.restoreAllMocks()
    await server().admin.config("SET", "maxmemory-policy", "noeviction")
  })

  it.scopedLive("make logs a warning naming an allkeys-* policy and the fix; noeviction and volatile-* are quiet", () =>
    Effect.gen(function* () {
      const warnings = (value: string) =>
        Effect.gen(function* () {
          yield* policy(value)
          const logs = yield* Ref.make<ReadonlyArray<string>>([])
          const logger = Logger.make(({ logLevel, message }) =>
            Effect.runSync(Ref.update(logs, (all) => [...all, `${logLevel.label} ${String(message)}`]))
          )
          yield* Effect.scoped(
            RedisTokenCache.make({ url: server().url, key: uniqueKey() }).pipe(
              Effect.provide(Logger.replace(Logger.defaultLogger, logger))
            )
          )
          return (yield* Ref.get(logs)).filter((line) => line.startsWith("WARN"))
        })
      for (const evicting of ["allkeys-lru", "allkeys-lfu", "allkeys-random"]) {
        const lines = yield* warnings(evicting)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(`maxmemory-policy ${evicting}`)
        expect(lines[0]).toContain("noeviction")
        expect(lines[0]).toContain(server().url.replace("redis://", ""))
      }
      for (const quiet of ["noeviction", "volatile-lru", "volatile-ttl"]) {
        expect(yield* warnings(quiet)).toEqual([])
      }
    })
  )

  it.live("connect (plain code) warns too", () =>
    Effect.gen(function* () {
      yield* policy("allkeys-lru")
      const lines: Array<string> = []
      for (const method of ["log", "warn", "error", "info"] as const) {
        vi.spyOn(console, method).mockImplementation((...args: ReadonlyArray<unknown>) => {
          lines.push(args.map(String).join(" "))
        })
      }
      const tokens = yield* Effect.promise(() => RedisTokenCache.connect({ url: server().url, key: uniqueKey() }))
      yield* Effect.promise(() => tokens.close())
      expect(lines.filter((line) => line.includes("maxmemory-policy allkeys-lru"))).toHaveLength(1)
    })
  )
}
