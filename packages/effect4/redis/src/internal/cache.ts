/**
 * A `TokenCache` over one Redis connection and one key, declaring the two members of a shared cache: `withLock`
 * (`lock.ts`) and `compareAndSet`. Every operation is one script of the protocol both lines share
 * (`shared/redisScripts.ts`): a key that holds another application's value is a TokenCacheError naming it, and is
 * never deleted, re-timed or overwritten.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { TokenCache, TokenCacheError, type TokenInfo } from "service-sdk"
import type { Connection } from "./connection.js"
import { script } from "./connection.js"
import * as Lock from "./lock.js"
import { entryTtlMillis } from "./shared/redisProtocol.js"

/** The error for a key that holds another application's value (`kind`: its Redis type). */
export const neighbour = (connection: Connection, key: string, kind: string) =>
  new TokenCacheError({
    message: `the Redis key "${key}" on ${connection.address} holds another application's value (a ${kind}); it is left alone: pick another key`
  })

/** The cache of `key` over `connection`. */
export const make = (connection: Connection, key: string, lock: Lock.LockOptions): TokenCache.TokenCache => {
  const withLock = Lock.make(connection, lock)
  const ttlOf = (token: TokenInfo) =>
    Effect.map(
      Clock.currentTimeMillis,
      (now) => entryTtlMillis(token.refreshToken !== undefined, token.expiresAt, now) ?? 0
    )
  /** `[1 | 0, replicas]`, or `[type, 0]` for another application's value. */
  const written = (reply: unknown) =>
    Array.isArray(reply) && typeof reply[0] === "string"
      ? Effect.fail(neighbour(connection, key, reply[0]))
      : Effect.succeed(Array.isArray(reply) && reply[0] === 1)

  const get = Effect.flatMap(
    connection.run(`GET ${key}`, (redis) => script(redis, "serviceSdkTokenGet", key)),
    (reply): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> =>
      reply === null
        ? Effect.succeed(Option.none())
        : Array.isArray(reply)
          ? Effect.fail(neighbour(connection, key, String(reply[0])))
          : Effect.succeed(TokenCache.decodeJson(String(reply)))
  )
  const set = (token: TokenInfo) =>
    Effect.flatMap(ttlOf(token), (ttl) =>
      Effect.flatMap(
        connection.run(`SET ${key}`, (redis) =>
          script(redis, "serviceSdkTokenSet", key, TokenCache.encodeJson(token), ttl)
        ),
        (reply) => Effect.asVoid(written(reply))
      )
    )
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    Effect.flatMap(ttlOf(next), (ttl) =>
      Effect.flatMap(
        connection.run(`SET ${key} (compare-and-set)`, (redis) =>
          script(
            redis,
            "serviceSdkTokenCas",
            key,
            Option.match(expected, { onNone: () => "", onSome: TokenCache.encodeJson }),
            TokenCache.encodeJson(next),
            ttl
          )
        ),
        written
      )
    )
  const clear = Effect.flatMap(
    connection.run(`DEL ${key}`, (redis) => script(redis, "serviceSdkTokenClear", key)),
    (reply) => (typeof reply === "string" ? Effect.fail(neighbour(connection, key, reply)) : Effect.void)
  )
  return {
    get: Effect.withSpan(get, "RedisTokenCache.get"),
    set: (token) => Effect.withSpan(set(token), "RedisTokenCache.set"),
    clear: Effect.withSpan(clear, "RedisTokenCache.clear"),
    withLock: (self) => Effect.withSpan(withLock(self), "RedisTokenCache.withLock"),
    compareAndSet: (expected, next) => Effect.withSpan(compareAndSet(expected, next), "RedisTokenCache.compareAndSet")
  }
}
