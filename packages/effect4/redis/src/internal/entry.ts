/**
 * The token entry under the cache key: the stored JSON (one format for both Effect lines), how long Redis keeps it,
 * and `compareAndSet` in one Lua script.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type TokenCacheError, TokenInfo } from "service-sdk"
import type { Connection } from "./connection.js"
import { parseTokenJson, stringifyTokenJson, type TokenJson } from "./shared/tokenJson.js"
import { entryTtlMillis } from "./wire.js"

/** The stored text of a token. */
export const encode = (token: TokenInfo): string => {
  const json: TokenJson = {
    access_token: Redacted.value(token.accessToken),
    expires_at: token.expiresAt,
    ...(token.refreshToken !== undefined ? { refresh_token: Redacted.value(token.refreshToken) } : {}),
    ...(token.scope !== undefined ? { scope: token.scope } : {}),
    ...(token.clientId !== undefined ? { client_id: token.clientId } : {}),
    ...(token.authUrl !== undefined ? { auth_url: token.authUrl } : {}),
    ...(token.issuedAt !== undefined ? { issued_at: token.issuedAt } : {}),
    ...(token.refreshRejected === true ? { refresh_rejected: true as const } : {})
  }
  return stringifyTokenJson(json)
}

/** Stored text read leniently: an invalid entry is none. */
export const decode = (text: string): Option.Option<TokenInfo> => {
  const json = parseTokenJson(text)
  if (json === undefined) return Option.none()
  return Option.some(
    new TokenInfo({
      accessToken: Redacted.make(json.access_token),
      expiresAt: json.expires_at,
      ...(json.refresh_token !== undefined ? { refreshToken: Redacted.make(json.refresh_token) } : {}),
      ...(json.scope !== undefined ? { scope: json.scope } : {}),
      ...(json.client_id !== undefined ? { clientId: json.client_id } : {}),
      ...(json.auth_url !== undefined ? { authUrl: json.auth_url } : {}),
      ...(json.issued_at !== undefined ? { issuedAt: json.issued_at } : {}),
      ...(json.refresh_rejected === true ? { refreshRejected: true } : {})
    })
  )
}

const ttlOf = (token: TokenInfo, now: number) => entryTtlMillis(token.refreshToken !== undefined, token.expiresAt, now)

/** The entry under `key`; a missing or invalid one is none. */
export const read = (connection: Connection, key: string): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> =>
  Effect.map(
    connection.run(`GET ${key}`, (redis) => redis.get(key)),
    (text) => (text === null ? Option.none() : decode(text))
  )

/** Replaces the entry under `key` (a plain SET also drops a previous entry's expiry). */
export const write = (connection: Connection, key: string, token: TokenInfo): Effect.Effect<void, TokenCacheError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const text = encode(token)
    const ttl = ttlOf(token, now)
    return Effect.asVoid(
      connection.run(`SET ${key}`, (redis) => (ttl === undefined ? redis.set(key, text) : redis.set(key, text, "PX", ttl)))
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
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.map(
      connection.script(
        `SET ${key} (compare-and-set)`,
        "serviceSdkTokenCas",
        key,
        Option.match(expected, { onNone: () => "", onSome: encode }),
        encode(token),
        ttlOf(token, now) ?? 0
      ),
      (written) => written === 1
    )
  )
