/**
 * A `TokenCache` over one Redis connection and one key, declaring the two members of a shared cache: `withLock`
 * (`lock.ts`) and `compareAndSet` (one Lua script). The entry is the stored token JSON (one format for both lines).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { TokenCache, TokenInfo } from "service-sdk"
import type { Connection } from "./connection.js"
import { script } from "./connection.js"
import * as Lock from "./lock.js"
import { entryTtlMillis } from "./shared/redisProtocol.js"
import { parseTokenJson, stringifyTokenJson, type TokenJson } from "./shared/tokenJson.js"
import * as Redacted from "effect/Redacted"
import { TokenInfo as TokenInfoClass } from "service-sdk"

const toJson = (token: TokenInfo): TokenJson => ({
  access_token: Redacted.value(token.accessToken),
  expires_at: token.expiresAt,
  ...(token.refreshToken !== undefined ? { refresh_token: Redacted.value(token.refreshToken) } : {}),
  ...(token.scope !== undefined ? { scope: token.scope } : {}),
  ...(token.clientId !== undefined ? { client_id: token.clientId } : {}),
  ...(token.authUrl !== undefined ? { auth_url: token.authUrl } : {}),
  ...(token.issuedAt !== undefined ? { issued_at: token.issuedAt } : {}),
  ...(token.refreshRejected === true ? { refresh_rejected: true as const } : {})
})

const fromText = (text: string | null): Option.Option<TokenInfo> => {
  const json = text === null ? undefined : parseTokenJson(text)
  if (json === undefined) return Option.none()
  return Option.some(
    new TokenInfoClass({
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

/** The cache of `key` over `connection`. */
export const make = (connection: Connection, key: string, lock: Lock.LockOptions): TokenCache.TokenCache => {
  const withLock = Lock.make(connection, lock)
  const write = (token: TokenInfo) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const json = toJson(token)
      const text = stringifyTokenJson(json)
      const ttl = entryTtlMillis(json, now)
      return Effect.asVoid(
        connection.run(`SET ${key}`, (redis) =>
          ttl === undefined ? redis.set(key, text) : redis.set(key, text, "PX", ttl)
        )
      )
    })
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const json = toJson(next)
      const expectedText = Option.match(expected, { onNone: () => "", onSome: (t) => stringifyTokenJson(toJson(t)) })
      return Effect.map(
        connection.run(`SET ${key} (compare-and-set)`, (redis) =>
          script(
            redis,
            "serviceSdkTokenCas",
            key,
            expectedText,
            stringifyTokenJson(json),
            entryTtlMillis(json, now) ?? 0
          )
        ),
        (written) => written === 1
      )
    })
  return {
    get: Effect.withSpan(
      Effect.map(
        connection.run(`GET ${key}`, (redis) => redis.get(key)),
        fromText
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
