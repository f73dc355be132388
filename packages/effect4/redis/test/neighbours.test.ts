/**
 * Redis neighbours: a key the SDK would use that holds another application's value (another type, or a string that
 * is not a token entry or a lock of ours) is a TokenCacheError naming the key, and the value is never deleted,
 * re-timed or overwritten: not by the lock, a read, a write, a compare-and-set, a sign-in or a sign-out.
 */
import { randomUUID } from "node:crypto"
import { expect, it } from "@effect/vitest"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { TokenCacheError, TokenInfo, UserTokens } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { describeRedis } from "../../../redis/test/support/redisServer.js"

const uniqueKey = () => `test4:neighbours:${randomUUID()}`
const token = (accessToken: string, refreshToken?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    expiresAt: Date.now() / 1000 + 3600,
    ...(refreshToken === undefined ? {} : { refreshToken: Redacted.make(refreshToken) })
  })
const credentials = { clientId: "neighbour-client", clientSecret: "neighbour-secret", authUrl: "http://127.0.0.1:9" }

/** Another application's values, as `redis-cli` would plant them, and how to read them back. */
const NEIGHBOURS = [
  { kind: "a string", plant: ["set", "session-data:not-ours"], read: ["get"] },
  { kind: "a JSON string without access_token", plant: ["set", '{"user":"u1","cart":[1,2]}'], read: ["get"] },
  { kind: "a hash", plant: ["hset", "field", "value"], read: ["hgetall"] },
  { kind: "a list", plant: ["rpush", "job-1"], read: ["lrange", "0", "-1"] }
] as const

describeRedis("Redis neighbours (Effect 4)", (server) => {
  const call = (...args: ReadonlyArray<string>) => Effect.promise(() => server().admin.call(args[0]!, ...args.slice(1)))
  const snapshot = (key: string, neighbour: (typeof NEIGHBOURS)[number]) =>
    Effect.all({
      value: call(neighbour.read[0], key, ...neighbour.read.slice(1)),
      ttl: Effect.promise(() => server().admin.pttl(key))
    })
  const expectNamed = (error: unknown, key: string) => {
    expect(error).toBeInstanceOf(TokenCacheError)
    expect((error as TokenCacheError).message).toContain(`"${key}"`)
    expect((error as TokenCacheError).message).toContain("another application's value")
  }

  for (const neighbour of NEIGHBOURS) {
    it.live(
      `a lock key or an entry key holding ${neighbour.kind}: a TokenCacheError at once, the value left alone`,
      () =>
        Effect.gen(function* () {
          const key = uniqueKey()
          const lockKey = RedisTokenCache.lockKey(key)
          yield* call(neighbour.plant[0], lockKey, ...neighbour.plant.slice(1))
          yield* call(neighbour.plant[0], key, ...neighbour.plant.slice(1))
          const lockBefore = yield* snapshot(lockKey, neighbour)
          const entryBefore = yield* snapshot(key, neighbour)
          expect(lockBefore.ttl).toBe(-1)
          const tokens = yield* RedisTokenCache.make({ url: server().url, key, lockWait: "20 seconds" })
          const ran = yield* Ref.make(false)
          const started = Date.now()
          const error = yield* Effect.flip(tokens.withLock!(Ref.set(ran, true)))
          expect(Date.now() - started).toBeLessThan(10_000)
          expectNamed(error, lockKey)
          expect(yield* Ref.get(ran)).toBe(false)

          expectNamed(yield* Effect.flip(tokens.get), key)
          expectNamed(yield* Effect.flip(tokens.set(token("mine", "rt-mine"))), key)
          expectNamed(yield* Effect.flip(tokens.set(token("mine-without-refresh"))), key)
          expectNamed(yield* Effect.flip(tokens.compareAndSet!(Option.none(), token("mine", "rt-mine"))), key)
          expectNamed(yield* Effect.flip(tokens.clear!), key)
          yield* Effect.sleep("300 millis")
          expect(yield* snapshot(lockKey, neighbour)).toEqual(lockBefore)
          expect(yield* snapshot(key, neighbour)).toEqual(entryBefore)
        })
    )
  }

  it.live("UserTokens.signIn and signOut over another application's hash at the user's key: a TokenCacheError", () =>
    Effect.gen(function* () {
      const prefix = `test4:neighbours:${randomUUID()}:`
      const key = RedisTokenStore.userKey(prefix, "alice")
      yield* call("hset", key, "theme", "dark", "language", "fr")
      const store = yield* RedisTokenStore.make({ url: server().url, prefix })
      const users = yield* UserTokens.make({ ...credentials, store })
      expectNamed(yield* Effect.flip(users.signIn("alice", token("alice-at", "alice-rt"))), key)
      const other = yield* UserTokens.make({ ...credentials, store })
      expectNamed(yield* Effect.flip(other.provider("alice").getAccessToken), key)
      expectNamed(yield* Effect.flip(users.signOut("alice")), key)
      expect(yield* call("hgetall", key)).toEqual({ theme: "dark", language: "fr" })
      expect(yield* Effect.promise(() => server().admin.pttl(key))).toBe(-1)
      yield* users.signIn("bob", token("bob-at", "bob-rt"))
      expect(Redacted.value(yield* users.provider("bob").getAccessToken)).toBe("bob-at")
      expect((yield* (yield* MockHttpClient).requests).length).toBe(0)
    }).pipe(
      Effect.provide(
        MockHttpClient.layer(() =>
          MockHttpClient.json({ access_token: "fresh", token_type: "Bearer", expires_in: 3600 })
        )
      )
    )
  )
})
