/**
 * What the providers share: their options (the protocol's, extended with ownership), the protocol client they
 * reach the token endpoint through (`OAuthClient`), and cache entries bound to their client. The refresh grant as a
 * renewal is `refreshGrant.ts`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Option from "effect/Option"
import type * as OAuthClient from "../OAuthClient.js"
import type { TokenCacheError } from "../ServiceError.js"
import * as TokenCache from "../TokenCache.js"
import { TokenInfo } from "../TokenInfo.js"
import {
  nonNegativeDuration,
  positiveDuration,
  type ProtocolOptions,
  type ResolvedProtocol,
  resolveProtocol
} from "./config.js"
import * as Protocol from "./oauthClient.js"
import * as SignInEnd from "@service-sdk/shared/signInEnd"
import * as SignIn from "./signIn.js"
import * as TokenEndpoint from "./tokenEndpoint.js"

/** The ownership options every provider adds to the protocol's. */
export interface OwnershipOptions {
  /** Where the token is kept (default: in memory). */
  readonly tokenCache?: TokenCache.TokenCache | undefined
  /** A token is renewed this long before it expires (default 30 s). */
  readonly skew?: Duration.Input | undefined
  /**
   * Off by default. Within this long of going stale, the first caller starts a background renewal (single flight)
   * and is served the still-valid token, so at steady load nobody waits at an expiry; a failed background renewal is
   * logged and the normal path takes over at staleness.
   */
  readonly refreshAhead?: Duration.Input | undefined
}

export type ProviderOptions = ProtocolOptions & OwnershipOptions

export interface Resolved {
  readonly protocol: ResolvedProtocol
  readonly oauth: OAuthClient.Service
  readonly cache: TokenCache.TokenCache
  readonly skewMillis: number
  /** 0 when off. */
  readonly refreshAheadMillis: number
}

/** The options checked and resolved, and the protocol client over the `HttpClient` in context. */
export const resolve = (options: ProviderOptions) =>
  Effect.gen(function* () {
    const protocol = yield* resolveProtocol(options)
    const skew = yield* nonNegativeDuration(options.skew, "30 seconds", "skew")
    const refreshAhead =
      options.refreshAhead === undefined ? undefined : yield* positiveDuration(options.refreshAhead, 1, "refreshAhead")
    const oauth = Protocol.make(protocol, TokenEndpoint.make(protocol, yield* HttpClient.HttpClient))
    const cache = options.tokenCache ?? (yield* TokenCache.memory())
    return {
      protocol,
      oauth,
      cache,
      skewMillis: Duration.toMillis(skew),
      refreshAheadMillis: refreshAhead === undefined ? 0 : Duration.toMillis(refreshAhead)
    } satisfies Resolved
  })

/**
 * Whether a cache entry belongs to this provider: written for the same `client_id` and `auth_url` (an entry without
 * them is accepted), with every scope the provider asks for when the entry names its scope.
 */
export const accepts =
  (protocol: Pick<ResolvedProtocol, "clientId" | "authUrl" | "scope">) =>
  (token: TokenInfo): boolean => {
    if (token.clientId !== undefined && token.clientId !== protocol.clientId) return false
    if (token.authUrl !== undefined && token.authUrl !== protocol.authUrl) return false
    if (protocol.scope === undefined || token.scope === undefined) return true
    const granted = new Set(token.scope.split(" "))
    return protocol.scope.split(" ").every((scope) => granted.has(scope))
  }

/** The token stamped with the provider's client and authorization server, as every provider writes entries. */
export const bind = (protocol: Pick<ResolvedProtocol, "clientId" | "authUrl">, token: TokenInfo): TokenInfo =>
  token.clientId === protocol.clientId && token.authUrl === protocol.authUrl
    ? token
    : new TokenInfo({ ...token, clientId: protocol.clientId, authUrl: protocol.authUrl })

/** When the sign-in kept in `cache` ends, read from its entry (an entry of another client reads as none). */
export const signInEnd = (
  cache: TokenCache.TokenCache,
  accepts: (token: TokenInfo) => boolean,
  lifetime: Duration.Duration | undefined
): Effect.Effect<Option.Option<Date>, TokenCacheError> =>
  Effect.map(cache.get, (entry) =>
    Option.flatMap(Option.filter(entry, accepts), (token) =>
      // never an Invalid Date: a time out of range is unknown (`shared/signInEnd.ts`)
      Option.fromUndefinedOr(SignInEnd.dateOf(SignIn.endOf(token, lifetime)))
    )
  )
