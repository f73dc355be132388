/**
 * A `TokenCache` over one Redis connection and one key, declaring the two members of a shared cache: `withLock`
 * (`lock.ts`) and `compareAndSet` (one Lua script). The entry is the stored token JSON (one format for both lines).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { TokenCache, TokenCacheError, type TokenInfo } from "service-sdk"
import type { Connection } from "./connection.js"
import { script } from "./connection.js"
import * as Lock from "./lock.js"
import { entryTtlMillis } from "./shared/redisProtocol.js"

/** The cache of `key` over `connection`. */
export const make = (connection: Connection, key: string, lock: Lock.LockOptions): TokenCache.TokenCache => {
  const withLock = Lock.make(connection, lock)
  const write = (token: TokenInfo) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const text = TokenCache.encodeJson(token)
      const ttl = entryTtlMillis(token.refreshToken !== undefined, token.expiresAt, now)
      return Effect.asVoid(
        connection.run(`SET ${key}`, (redis) =>
          ttl === undefined ? redis.set(key, text) : redis.set(key, text, "PX", ttl)
        )
      )
    })
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const text = TokenCache.encodeJson(next)
      const expectedText = Option.match(expected, { onNone: () => "", onSome: TokenCache.encodeJson })
      return Effect.map(
        connection.run(`SET ${key} (compare-and-set)`, (redis) =>
          script(
            redis,
            "serviceSdkTokenCas",
            key,
            expectedText,
            text,
            entryTtlMillis(next.refreshToken !== undefined, next.expiresAt, now) ?? 0
          )
        ),
        (written) => written === 1
      )
    })
  return {
    // a key that holds something else (another application's value) is an error, never read as empty: it would
    // then be written over
    get: Effect.withSpan(
      Effect.flatMap(
        connection.run(`GET ${key}`, (redis) => redis.get(key)),
        (text) => {
          if (text === null) return Effect.succeed(Option.none<TokenInfo>())
          const token = TokenCache.decodeJson(text)
          return Option.isSome(token)
            ? Effect.succeed(token)
            : Effect.fail(
                new TokenCacheError({
                  message: `the Redis key "${key}" on ${connection.address} holds a value that is not a service-sdk token entry (another application's?); it is left alone: pick another key`
                })
              )
        }
      ),
      "RedisTokenCache.get"
    ),
    set: (token) => Effect.withSpan(write(token), "RedisTokenCache.set"),
    clear: Effect.withSpan(
      Effect.asVoid(connection.run(`DEL ${key}`, (redis) => redis.del(key))),
      "RedisTokenCache.clear"
    ),
    withLock: (self) => Effect.withSpan(withLock(self), "RedisTokenCache.withLock"),
    compareAndSet: (expected, next) => Effect.withSpan(compareAndSet(expected, next), "RedisTokenCache.compareAndSet")
  }
}
