import { randomUUID } from "node:crypto"
import { RedisTokenCache } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import { describeRedis } from "./support/redisServer.js"

const uniqueKey = () => `test:cas:${randomUUID()}`
const token = (accessToken: string, refreshToken?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    expiresAt: Effect.runSync(Clock.currentTimeMillis) / 1000 + 3600,
    ...(refreshToken === undefined ? {} : { refreshToken: Redacted.make(refreshToken) })
  })
const accessOf = (text: string | null) =>
  text === null
    ? null
    : Option.match(TokenCache.decodeJson(text), { onNone: () => null, onSome: (t) => Redacted.value(t.accessToken) })

describeRedis("RedisTokenCache compare-and-set", (server) => {
  const admin = () => server().admin
  const cache = (key: string, options: Partial<RedisTokenCache.Options> = {}) =>
    RedisTokenCache.make({ url: server().url, key, ...options })

  it.scopedLive("compareAndSet writes only if the entry still holds the expected token (one Lua script)", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache(key)
      const cas = tokens.compareAndSet!
      const read = () => Effect.promise(() => admin().get(key))
      // none expects an empty entry
      expect(yield* cas(Option.none(), token("first", "rt-1"))).toBe(true)
      expect(yield* cas(Option.none(), token("other", "rt-x"))).toBe(false)
      expect(accessOf(yield* read())).toBe("first")

      // another process (that lost no lock, or a paused one) replaced it meanwhile: refused, the newer one kept
      const first = Option.getOrThrow(yield* tokens.get)
      yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(token("newer", "rt-2"))))
      expect(yield* cas(Option.some(first), token("older", "rt-1b"))).toBe(false)
      expect(accessOf(yield* read())).toBe("newer")

      // changed only by the rejected-refresh mark (or the expiry): written; two writes in a row both land
      const newer = Option.getOrThrow(yield* tokens.get)
      const marked = new TokenInfo({ ...newer, expiresAt: newer.expiresAt + 5, refreshRejected: true })
      yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(marked)))
      const renewed = token("renewed", "rt-3")
      expect(yield* cas(Option.some(newer), renewed)).toBe(true)
      expect(yield* cas(Option.some(renewed), token("renewed-again", "rt-4"))).toBe(true)
      expect(accessOf(yield* read())).toBe("renewed-again")

      // same access token, another refresh token: a change
      const current = Option.getOrThrow(yield* tokens.get)
      expect(
        yield* cas(Option.some(new TokenInfo({ ...current, refreshToken: Redacted.make("rt-z") })), token("x"))
      ).toBe(false)

      // gone (a sign-out, a FLUSHALL): a token is not expected there any more; none is
      yield* Effect.promise(() => admin().del(key))
      expect(yield* cas(Option.some(current), token("after-flush", "rt-5"))).toBe(false)
      expect(yield* read()).toBe(null)
      expect(yield* cas(Option.none(), token("after-flush", "rt-5"))).toBe(true)
      expect(accessOf(yield* read())).toBe("after-flush")

      // set stays a plain write
      yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(token("someone", "rt-x"))))
      yield* tokens.set(token("plain", "rt-6"))
      expect(accessOf(yield* read())).toBe("plain")
    })
  )

  it.scopedLive("an acquisition that timed out under CLIENT PAUSE WRITE leaves no lock once Redis resumes", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const lockKey = RedisTokenCache.lockKey(key)
      const tokens = yield* cache(key, { commandTimeout: "300 millis" })
      yield* tokens.get
      yield* Effect.promise(() => admin().call("CLIENT", "PAUSE", "1200", "WRITE"))
      const started = Date.now()
      const error = yield* Effect.flip(tokens.withLock!(Effect.succeed("never")))
      expect(error._tag).toBe("TokenCacheError")
      expect(Date.now() - started).toBeLessThan(1000)
      // once the pause ends, the queued SET NX runs, then the compare-and-delete sent after it
      yield* Effect.sleep("1500 millis")
      expect(yield* Effect.promise(() => admin().exists(lockKey))).toBe(0)
      expect(yield* tokens.withLock!(Effect.succeed("next"))).toBe("next")
    })
  )
})
