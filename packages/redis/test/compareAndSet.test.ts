import { randomUUID } from "node:crypto"
import { RedisTokenCache } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenCache, TokenInfo } from "service-sdk"
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

  it.scopedLive("under the lock, set writes only if the entry is still the one get read", () =>
    Effect.gen(function* () {
      const key = uniqueKey()
      const tokens = yield* cache(key)
      yield* tokens.set(token("first", "rt-1"))
      yield* tokens.withLock!(
        Effect.gen(function* () {
          yield* tokens.get
          // another process (that lost no lock, or a paused one) replaced it meanwhile
          yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(token("newer", "rt-2"))))
          yield* tokens.set(token("older", "rt-1b"))
        })
      )
      expect(accessOf(yield* Effect.promise(() => admin().get(key)))).toBe("newer")

      // unchanged, or changed only by the rejected-refresh mark: written; two writes under one lock both land
      yield* tokens.withLock!(
        Effect.gen(function* () {
          const read = Option.getOrThrow(yield* tokens.get)
          const marked = new TokenInfo({ ...read, refreshRejected: true })
          yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(marked)))
          yield* tokens.set(token("renewed", "rt-3"))
          yield* tokens.set(token("renewed-again", "rt-4"))
        })
      )
      expect(accessOf(yield* Effect.promise(() => admin().get(key)))).toBe("renewed-again")

      // gone (FLUSHALL): written, so that a rotated refresh token is never dropped
      yield* tokens.withLock!(
        Effect.gen(function* () {
          yield* tokens.get
          yield* Effect.promise(() => admin().del(key))
          yield* tokens.set(token("after-flush", "rt-5"))
        })
      )
      expect(accessOf(yield* Effect.promise(() => admin().get(key)))).toBe("after-flush")

      // outside the lock, set is a plain write
      yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(token("someone", "rt-x"))))
      yield* tokens.set(token("plain", "rt-6"))
      expect(accessOf(yield* Effect.promise(() => admin().get(key)))).toBe("plain")
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
