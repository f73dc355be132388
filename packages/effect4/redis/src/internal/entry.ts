/**
 * The token entry under the cache key: the stored JSON (one format for both Effect lines) and how long Redis keeps
 * it. Every operation is one script on the one key, which leaves another application's value alone (a
 * TokenCacheError naming the key).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { TokenCache, TokenCacheError, type TokenInfo } from "@service-sdk/effect"
import type { Connection } from "./connection.js"
import * as Durable from "./durable.js"
import { entryTtlMillis } from "@service-sdk/shared/redisProtocol"
import { neighbourMessage } from "@service-sdk/shared/redisClient"

/** The stored text of a token: the format both lines store. */
const encode = TokenCache.encodeJson

const ttlOf = (token: TokenInfo, now: number) => entryTtlMillis(token.refreshToken !== undefined, token.expiresAt, now)

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
      if (typeof reply === "string") return Effect.succeed(TokenCache.decodeJson(reply))
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
