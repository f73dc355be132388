/**
 * `compareAndSet` of the Redis cache (one Lua script): it writes only over the entry it expected (the same access
 * and refresh token, whatever mark was added since), or over nothing for none; and a lock try that timed out under
 * `CLIENT PAUSE WRITE` leaves no lock once Redis resumes.
 */
import { randomUUID } from "node:crypto"
import { expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenInfo } from "@service-sdk/effect"
import { describeRedis } from "../../../redis/test/support/redisServer.js"

const uniqueKey = () => `test4:cas:${randomUUID()}`
const token = (accessToken: string, refreshToken?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    expiresAt: Date.now() / 1000 + 3600,
    ...(refreshToken === undefined ? {} : { refreshToken: Redacted.make(refreshToken) })
  })
const stored = (accessToken: string, refreshToken?: string) =>
  JSON.stringify({ access_token: accessToken, expires_at: Date.now() / 1000 + 3600, refresh_token: refreshToken })
const accessOf = (text: string | null) =>
  text === null ? null : (JSON.parse(text) as { access_token: string }).access_token

describeRedis("RedisTokenCache compare-and-set (Effect 4)", (server) => {
  const admin = () => server().admin
  const read = (key: string) => Effect.promise(() => admin().get(key))

  it.live("compareAndSet writes only if the entry still holds the expected token", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* RedisTokenCache.make({ url: server().url, key })
      const cas = tokens.compareAndSet!
      expect(yield* cas(Option.none(), token("first", "rt-1"))).toBe(true)
      expect(yield* cas(Option.none(), token("other", "rt-x"))).toBe(false)
      expect(accessOf(yield* read(key))).toBe("first")

      // replaced meanwhile by another process (of either line): refused, the newer one kept
      const first = Option.getOrThrow(yield* tokens.get)
      yield* Effect.promise(() => admin().set(key, stored("newer", "rt-2")))
      expect(yield* cas(Option.some(first), token("older", "rt-1b"))).toBe(false)
      expect(accessOf(yield* read(key))).toBe("newer")

      // changed only by the rejected-refresh mark, the expiry and the key order: written
      const newer = Option.getOrThrow(yield* tokens.get)
      yield* Effect.promise(() =>
        admin().set(
          key,
          JSON.stringify({ refresh_rejected: true, refresh_token: "rt-2", expires_at: 1, access_token: "newer" })
        )
      )
      const renewed = token("renewed", "rt-3")
      expect(yield* cas(Option.some(newer), renewed)).toBe(true)
      expect(yield* cas(Option.some(renewed), token("renewed-again", "rt-4"))).toBe(true)
      expect(accessOf(yield* read(key))).toBe("renewed-again")

      // same access token, another refresh token: a change
      const current = Option.getOrThrow(yield* tokens.get)
      expect(
        yield* cas(Option.some(new TokenInfo({ ...current, refreshToken: Redacted.make("rt-z") })), token("x"))
      ).toBe(false)

      // gone (a sign-out, a FLUSHALL): a token is not expected there any more; none is
      yield* Effect.promise(() => admin().del(key))
      expect(yield* cas(Option.some(current), token("after-flush", "rt-5"))).toBe(false)
      expect(yield* read(key)).toBe(null)
      expect(yield* cas(Option.none(), token("after-flush", "rt-5"))).toBe(true)

      // a written entry without refresh token gets its expiry, one with a refresh token none
      expect(yield* Effect.promise(() => admin().pttl(key))).toBe(-1)
      expect(yield* cas(Option.some(token("after-flush", "rt-5")), token("app-only"))).toBe(true)
      expect(yield* Effect.promise(() => admin().pttl(key))).toBeGreaterThan(3_600_000)

      // set stays a plain write over an entry of ours
      yield* Effect.promise(() => admin().set(key, stored("someone", "rt-x")))
      yield* tokens.set(token("plain", "rt-6"))
      expect(accessOf(yield* read(key))).toBe("plain")
    })
  )

  it.live("an acquisition that timed out under CLIENT PAUSE WRITE leaves no lock once Redis resumes", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const lockKey = RedisTokenCache.lockKey(key)
      const tokens = yield* RedisTokenCache.make({ url: server().url, key, commandTimeout: "300 millis" })
      yield* tokens.get
      yield* Effect.promise(() => admin().call("CLIENT", "PAUSE", "1200", "WRITE"))
      const started = Date.now()
      const error = yield* Effect.flip(tokens.withLock!(Effect.succeed("never")))
      expect(error._tag).toBe("TokenCacheError")
      expect(Date.now() - started).toBeLessThan(1000)
      yield* Effect.sleep("1500 millis")
      expect(yield* Effect.promise(() => admin().exists(lockKey))).toBe(0)
      expect(yield* tokens.withLock!(Effect.succeed("next"))).toBe("next")
    })
  )
})
