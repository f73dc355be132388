/**
 * The token entry under the cache key: the JSON of `TokenCache.encodeJson`, and how long Redis keeps it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { TokenCache, type TokenCacheError, type TokenInfo } from "service-sdk"
import { type Connection, script } from "./connection.js"

/** An entry without a refresh token outlives its access token by this much (other hosts' clocks may lag). */
export const EXPIRY_GRACE_MILLIS = 60_000

/**
 * How long Redis keeps an entry, in milliseconds, or `undefined` for no expiry. An entry with a refresh token never
 * expires: the refresh token must outlive the access token, or a user-scoped provider would have to log in again.
 */
export const entryTtlMillis = (token: TokenInfo, nowMillis: number): number | undefined =>
  token.refreshToken !== undefined
    ? undefined
    : Math.max(1000, Math.ceil(token.expiresAt * 1000 - nowMillis) + EXPIRY_GRACE_MILLIS)

/** The entry under `key`; a missing or invalid one is none. */
export const read = (connection: Connection, key: string): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> =>
  Effect.map(
    connection.run(`GET ${key}`, (redis) => redis.get(key)),
    (text) => (text === null ? Option.none() : TokenCache.decodeJson(text))
  )

/** Replaces the entry under `key` (a plain SET also drops a previous entry's expiry). */
export const write = (connection: Connection, key: string, token: TokenInfo): Effect.Effect<void, TokenCacheError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const json = TokenCache.encodeJson(token)
    const ttl = entryTtlMillis(token, now)
    return connection.run(`SET ${key}`, (redis) =>
      ttl === undefined ? redis.set(key, json) : redis.set(key, json, "PX", ttl)
    )
  })

/**
 * `TokenCache.compareAndSet` in one script: replaces the entry under `key` only if it still has the access and
 * refresh token of `expected` (compared on the decoded JSON, so a `refresh_rejected` mark or another field order does
 * not count as a change), or, for none, is gone. True when written.
 */
export const compareAndSet = (
  connection: Connection,
  key: string,
  expected: Option.Option<TokenInfo>,
  token: TokenInfo
): Effect.Effect<boolean, TokenCacheError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const json = TokenCache.encodeJson(token)
    const ttl = entryTtlMillis(token, now) ?? 0
    const expectedJson = Option.match(expected, { onNone: () => "", onSome: TokenCache.encodeJson })
    return Effect.map(
      connection.run(`SET ${key} (compare-and-set)`, (redis) =>
        script(redis, "serviceSdkTokenCas", key, expectedJson, json, ttl)
      ),
      (written) => written === 1
    )
  })
