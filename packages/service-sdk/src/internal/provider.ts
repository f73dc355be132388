/**
 * What the providers share: resolving their options (explicit, then environment, then defaults), the `OAuthClient`
 * service they reach the token endpoint through, and wiring the single flight into a `TokenProvider` service.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as Duration from "effect/Duration"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as ClientCredentials from "../ClientCredentials.js"
import type * as OAuthClient from "../OAuthClient.js"
import type { AuthenticationError, ConfigurationError, TokenCacheError, TransportError } from "../ServiceError.js"
import * as TokenCache from "../TokenCache.js"
import type { TokenInfo } from "../TokenInfo.js"
import { TokenProvider, type TokenProviderService } from "../TokenProvider.js"
import { nonNegativeDuration, positiveDuration, resolveProtocol } from "./config.js"
import * as Protocol from "./oauthClient.js"
import { dateOf } from "@service-sdk/shared/signInEnd"
import * as SignIn from "./signIn.js"
import * as SingleFlight from "./singleFlight.js"
import { derivedToken } from "./derivedToken.js"

/** What every provider resolved: its client, its cache and timing, and the protocol steps it renews through. */
export interface ResolvedProvider {
  readonly authUrl: string
  readonly clientId: string
  /** A client without a secret (RFC 6749 §2.1): `client_id` in token request bodies, no Authorization header. */
  readonly publicClient: boolean
  readonly redirectUri: string | undefined
  readonly scope: string | undefined
  /** How long a sign-in lasts when the entry does not say (`refreshTokenLifetime`). */
  readonly refreshTokenLifetime: Duration.Duration | undefined
  readonly cache: TokenCache.TokenCache
  readonly skew: Duration.Duration
  /** None when off. */
  readonly refreshAhead: Duration.Duration | undefined
  /** The only way a provider reaches the token endpoint. */
  readonly oauth: OAuthClient.Service
}

/** The options of a provider: the protocol's, and ownership's (cache, skew, renewal ahead). */
export type Options = ClientCredentials.Options &
  Pick<OAuthClient.Options, "publicClient" | "redirectUri" | "issuer" | "requireIss" | "refreshTokenLifetime">

export const resolve = (
  options: Options,
  { redirectUri = true }: { readonly redirectUri?: boolean } = {}
): Effect.Effect<ResolvedProvider, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const protocol = yield* resolveProtocol(options, { redirectUri })
    const skew = yield* nonNegativeDuration(options.skew, "30 seconds", "skew")
    const refreshAhead = yield* refreshAheadOption(options.refreshAhead)
    const oauth = Protocol.fromResolved(protocol, yield* HttpClient.HttpClient)
    const cache = options.tokenCache ?? (yield* TokenCache.memory())
    return {
      authUrl: protocol.authUrl,
      clientId: protocol.clientId,
      publicClient: protocol.clientSecret === undefined,
      redirectUri: protocol.redirectUri,
      scope: protocol.scope,
      refreshTokenLifetime: protocol.refreshTokenLifetime,
      cache,
      skew,
      refreshAhead,
      oauth
    }
  })

/** `refreshAhead`: off when absent, else a positive, finite duration. */
export const refreshAheadOption = (
  value: Duration.DurationInput | undefined
): Effect.Effect<Duration.Duration | undefined, ConfigurationError> =>
  value === undefined ? Effect.succeed(undefined) : positiveDuration(value, value, "refreshAhead")

/**
 * Whether a cache entry belongs to this provider: written for the same `client_id` and `auth_url` (an
 * entry without them is accepted), with every scope the provider asks for when the entry names its scope.
 */
export const accepts =
  (resolved: Pick<ResolvedProvider, "clientId" | "authUrl" | "scope">) =>
  (token: TokenInfo): boolean => {
    if (token.clientId !== undefined && token.clientId !== resolved.clientId) return false
    if (token.authUrl !== undefined && token.authUrl !== resolved.authUrl) return false
    if (resolved.scope === undefined || token.scope === undefined) return true
    const granted = new Set(token.scope.split(" "))
    return resolved.scope.split(" ").every((scope) => granted.has(scope))
  }

/** The token stamped with the provider's client and authorization server, as every provider writes entries. */
export const bind = (resolved: Pick<ResolvedProvider, "clientId" | "authUrl">, token: TokenInfo): TokenInfo =>
  token.clientId === resolved.clientId && token.authUrl === resolved.authUrl
    ? token
    : derivedToken({ ...token, clientId: resolved.clientId, authUrl: resolved.authUrl })

/**
 * A `TokenProvider` service on the shared single flight, with what its owner needs besides: `store` (a sign-in),
 * `signOut`, and `peek` (the still-valid cached token read synchronously: the Promise facade's fast path). Background
 * work (renewals ahead of expiry, retried cache writes) runs in the `Scope` it is made in.
 */
export const makeService = (
  name: string,
  resolved: ResolvedProvider,
  renew: (
    current: Option.Option<TokenInfo>
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | SingleFlight.RefreshRejected>,
  whenCacheDown: "local" | "fail",
  entryGone: "signedOut" | "keep" = "keep"
) =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const scope = yield* Scope.Scope
    const flight = yield* SingleFlight.make({
      name,
      cache: resolved.cache,
      skew: resolved.skew,
      refreshAhead: resolved.refreshAhead,
      scope,
      clock,
      renew: (current) => Effect.map(renew(current), (token) => bind(resolved, token)),
      accepts: accepts(resolved),
      whenCacheDown,
      entryGone
    })
    const service: TokenProviderService = {
      getAccessToken: flight.getAccessToken,
      forceRefresh: flight.forceRefresh
    }
    return {
      service,
      store: (token: TokenInfo) => flight.store(bind(resolved, token)),
      signOut: flight.signOut,
      peek: flight.peek,
      joinUnderWay: flight.joinUnderWay
    }
  })

/** A provider as a scoped `Layer` of its own tag and of `TokenProvider`: its background work ends with the layer. */
export const layer = <I, S extends TokenProviderService, E, R>(
  tag: Context.Tag<I, S>,
  make: Effect.Effect<S, E, R>
): Layer.Layer<I | TokenProvider, E, Exclude<R, Scope.Scope>> =>
  Layer.scopedContext(
    Effect.map(make, (service) => Context.make(tag, service).pipe(Context.add(TokenProvider, service)))
  )

/** When the sign-in kept in `cache` ends, read from its entry (an entry of another client reads as none). */
export const signInEnd = (
  cache: TokenCache.TokenCache,
  accepts: (token: TokenInfo) => boolean,
  lifetime: Duration.Duration | undefined
): Effect.Effect<Option.Option<Date>, TokenCacheError> =>
  Effect.map(cache.get, (entry) =>
    Option.flatMap(Option.filter(entry, accepts), (token) =>
      // never an Invalid Date: a time out of range is unknown (`shared/signInEnd.ts`)
      Option.fromNullable(dateOf(SignIn.endOf(token, lifetime)))
    )
  )
