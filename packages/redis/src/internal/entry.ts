/**
 * The token entry under the cache key: the JSON of `TokenCache.encodeJson`, and how long Redis keeps it. Every
 * operation is one script on the one key: it leaves another application's value alone (a TokenCacheError naming
 * the key), and a write that the server's replicas have not confirmed is kept until they have (see `durable.ts`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { TokenCache, TokenCacheError, type TokenInfo } from "@service-sdk/effect"
import { type Connection, neighbour, script } from "./connection.js"
import * as Durable from "./durable.js"

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

const unexpected = (connection: Connection, what: string, reply: unknown) =>
  new TokenCacheError({ message: `Redis ${what} on ${connection.address} gave an unexpected reply (${typeof reply})` })

/** The entry under `key`; an empty or invalid one is none, another application's value a TokenCacheError. */
export const read = (connection: Connection, key: string): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> =>
  Effect.flatMap(
    connection.run(`GET ${key}`, (redis) => script(redis, "serviceSdkTokenGet", key)),
    (reply): Effect.Effect<Option.Option<TokenInfo>, TokenCacheError> => {
      if (reply === null) return Effect.succeedNone
      if (typeof reply === "string") return Effect.succeed(TokenCache.decodeJson(reply))
      if (Array.isArray(reply)) return Effect.fail(neighbour(connection.address, key, String(reply[0]), "token entry"))
      return Effect.fail(unexpected(connection, `GET ${key}`, reply))
    }
  )

/** `[status, replicas]` of a write script: the status (1 written, 0 refused) or another application's value. */
const written = (
  connection: Connection,
  key: string,
  what: string,
  reply: unknown
): Effect.Effect<{ readonly landed: boolean; readonly replicas: number }, TokenCacheError> => {
  if (!Array.isArray(reply)) return Effect.fail(unexpected(connection, what, reply))
  const [status, replicas] = reply as [unknown, unknown]
  if (typeof status === "string") return Effect.fail(neighbour(connection.address, key, status, "token entry"))
  return Effect.succeed({ landed: status === 1, replicas: Number(replicas) || 0 })
}

const encoded = (token: TokenInfo) =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    json: TokenCache.encodeJson(token),
    ttl: entryTtlMillis(token, now) ?? 0
  }))

/** Writes the entry under `key` (a sign-in; the previous entry's expiry goes with it), unless another app's value is there. */
export const write = (connection: Connection, key: string, token: TokenInfo): Effect.Effect<void, TokenCacheError> =>
  Effect.gen(function* () {
    const { json, ttl } = yield* encoded(token)
    const what = `SET ${key}`
    const reply = yield* connection.run(what, (redis) => script(redis, "serviceSdkTokenSet", key, json, ttl))
    const { replicas } = yield* written(connection, key, what, reply)
    yield* Durable.confirm(connection, key, json, ttl, replicas)
  })

/**
 * `TokenCache.compareAndSet` in one script: replaces the entry under `key` only if it still has the access and
 * refresh token of `expected` (compared on the decoded JSON, so a `refresh_rejected` mark or another field order does
 * not count as a change), or, for none, is empty. True when written (and, with replicas, confirmed or kept).
 */
export const compareAndSet = (
  connection: Connection,
  key: string,
  expected: Option.Option<TokenInfo>,
  token: TokenInfo
): Effect.Effect<boolean, TokenCacheError> =>
  Effect.gen(function* () {
    const { json, ttl } = yield* encoded(token)
    const expectedJson = Option.match(expected, { onNone: () => "", onSome: TokenCache.encodeJson })
    const what = `SET ${key} (compare-and-set)`
    const reply = yield* connection.run(what, (redis) =>
      script(redis, "serviceSdkTokenCas", key, expectedJson, json, ttl)
    )
    const { landed, replicas } = yield* written(connection, key, what, reply)
    if (landed) yield* Durable.confirm(connection, key, json, ttl, replicas)
    return landed
  })

/** Deletes the entry under `key` (a sign-out), unless another application's value is there. */
export const clear = (connection: Connection, key: string): Effect.Effect<void, TokenCacheError> =>
  Effect.flatMap(
    connection.run(`DEL ${key}`, (redis) => script(redis, "serviceSdkTokenClear", key)),
    (reply) =>
      typeof reply === "string" ? Effect.fail(neighbour(connection.address, key, reply, "token entry")) : Effect.void
  )
