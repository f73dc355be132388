/**
 * The token entry under the cache key: the stored JSON (one format for both Effect lines) and how long Redis keeps
 * it. Every operation is one script on the one key, which leaves another application's value alone (a
 * TokenCacheError naming the key).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenCacheError, TokenInfo } from "service-sdk"
import type { Connection } from "./connection.js"
import * as Durable from "./durable.js"
import { parseTokenJson, stringifyTokenJson, type TokenJson } from "./shared/tokenJson.js"
import { entryTtlMillis } from "./shared/redisProtocol.js"
import { neighbourMessage } from "./shared/redisClient.js"

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

const ttlOf = (token: TokenInfo, now: number) =>
  entryTtlMillis(
    { expires_at: token.expiresAt, ...(token.refreshToken === undefined ? {} : { refresh_token: "" }) },
    now
  )

const neighbour = (connection: Connection, key: string, kind: unknown) =>
  new TokenCacheError({ message: neighbourMessage(connection.address, key, String(kind), "token entry") })

const unexpected = (connection: Connection, what: string, reply: unknown) =>
  new TokenCacheError({ message: `Redis ${what} on ${connection.address} gave an unexpected reply (${typeof reply})` })

/** The entry under `key`; an empty or invalid one is none, another application's value a TokenCacheError. */
export const read = (connection: Connection, key: string): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> =>
  Effect.flatMap(
    connection.script(`GET ${key}`, "serviceSdkTokenGet", key),
    (reply): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> => {
      if (reply === null) return Effect.succeedNone
      if (typeof reply === "string") return Effect.succeed(decode(reply))
      if (Array.isArray(reply)) return Effect.fail(neighbour(connection, key, reply[0]))
      return Effect.fail(unexpected(connection, `GET ${key}`, reply))
    }
  )

/**
 * Runs a write script (`[status, replicas]`): whether it landed; another application's value at the key is a
 * TokenCacheError and is left as it is.
 */
const writeWith = (
  connection: Connection,
  key: string,
  what: string,
  name: "serviceSdkTokenSet" | "serviceSdkTokenCas",
  args: (text: string, ttl: number) => ReadonlyArray<string | number>,
  token: TokenInfo
): Effect.Effect<boolean, TokenCacheError> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const text = encode(token)
    const ttl = ttlOf(token, now) ?? 0
    const reply = yield* connection.script(what, name, key, ...args(text, ttl))
    if (!Array.isArray(reply)) return yield* unexpected(connection, what, reply)
    const [status, replicas] = reply as [unknown, unknown]
    if (typeof status === "string") return yield* neighbour(connection, key, status)
    if (status !== 1) return false
    // with replicas: confirmed by one, or kept until one has it (a failover must not lose a rotated refresh token)
    yield* Durable.confirm(connection, key, text, ttl, Number(replicas) || 0)
    return true
  })

/** Writes the entry under `key` (a sign-in; the previous entry's expiry goes with it), unless another app's value is there. */
export const write = (connection: Connection, key: string, token: TokenInfo): Effect.Effect<void, TokenCacheError> =>
  Effect.asVoid(writeWith(connection, key, `SET ${key}`, "serviceSdkTokenSet", (text, ttl) => [text, ttl], token))

/**
 * `TokenCache.compareAndSet` in one script: replaces the entry under `key` only if it still has the access and
 * refresh token of `expected` (compared on the decoded JSON, so a `refresh_rejected` mark or another field order does
 * not count as a change), or, for none, is empty. True when written.
 */
export const compareAndSet = (
  connection: Connection,
  key: string,
  expected: Option.Option<TokenInfo>,
  token: TokenInfo
): Effect.Effect<boolean, TokenCacheError> =>
  writeWith(
    connection,
    key,
    `SET ${key} (compare-and-set)`,
    "serviceSdkTokenCas",
    (text, ttl) => [Option.match(expected, { onNone: () => "", onSome: encode }), text, ttl],
    token
  )

/** Deletes the entry under `key` (a sign-out), unless another application's value is there. */
export const clear = (connection: Connection, key: string): Effect.Effect<void, TokenCacheError> =>
  Effect.flatMap(connection.script(`DEL ${key}`, "serviceSdkTokenClear", key), (reply) =>
    typeof reply === "string" ? Effect.fail(neighbour(connection, key, reply)) : Effect.void
  )
