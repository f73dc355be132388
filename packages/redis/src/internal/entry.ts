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

/** The raw entry under `key` (null when there is none). */
export const readRaw = (connection: Connection, key: string): Effect.Effect<string | null, TokenCacheError> =>
  connection.run(`GET ${key}`, (redis) => redis.get(key))

/** A raw entry as a token; a missing or invalid one is none. */
export const decode = (text: string | null): Option.Option<TokenInfo> =>
  text === null ? Option.none() : TokenCache.decodeJson(text)

/** The entry under `key`; a missing or invalid one is none. */
export const read = (connection: Connection, key: string): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> =>
  Effect.map(readRaw(connection, key), decode)

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
 * Replaces the entry under `key` only if it is still `expected` (the raw entry read, null for none), in one script:
 * the compare-and-set that keeps a renewal that lost its lock from replacing a newer token. Succeeds with the JSON
 * written, or none when the entry had changed.
 */
export const compareAndSet = (
  connection: Connection,
  key: string,
  expected: string | null,
  token: TokenInfo
): Effect.Effect<Option.Option<string>, TokenCacheError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const json = TokenCache.encodeJson(token)
    const ttl = entryTtlMillis(token, now) ?? 0
    return Effect.map(
      connection.run(`SET ${key} (compare-and-set)`, (redis) =>
        script(redis, "serviceSdkTokenCas", key, expected ?? "", json, ttl)
      ),
      (written) => (written === 1 ? Option.some(json) : Option.none())
    )
  })
