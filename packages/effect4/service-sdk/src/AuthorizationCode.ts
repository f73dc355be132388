/**
 * User tokens (RFC 6749 §4.1, §6): sign-in with PKCE, then a cached token renewed with the refresh token, one
 * request for many callers; a refresh token answered `invalid_grant` is never sent again.
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { type ProtocolOptions, secretValue } from "./internal/config.js"
import * as PendingSignIns from "./internal/pendingSignIns.js"
import * as Provider from "./internal/provider.js"
import * as RefreshGrant from "./internal/refreshGrant.js"
import * as SingleFlight from "./internal/singleFlight.js"
import * as OAuthClient from "./OAuthClient.js"
import type { AuthenticationError, ConfigurationError, TokenCacheError, TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"
import * as TokenProvider from "./TokenProvider.js"

/**
 * The protocol's options (`OAuthClient.Options`) with ownership: `tokenCache` (default memory), `skew` (30 s) and a
 * `refreshToken` to start from when the cache has none.
 *
 * @since 2.0.0
 * @category options
 */
export type Options = ProtocolOptions &
  Provider.OwnershipOptions & {
    readonly refreshToken?: string | Redacted.Redacted<string> | undefined
  }

/**
 * The provider with its sign-in steps (those of its `OAuthClient`, with the token written to the cache).
 *
 * @since 2.0.0
 * @category models
 */
export interface Service extends TokenProvider.Service {
  /** The client's redirect URI, as resolved (`authorizeLocal` serves it on loopback). */
  readonly redirectUri: string | undefined
  readonly getAuthorizationUrl: (options?: OAuthClient.AuthorizationUrlOptions) => string
  readonly beginAuthorization: (
    options?: OAuthClient.BeginAuthorizationOptions
  ) => Effect.Effect<OAuthClient.PendingAuthorization>
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: OAuthClient.PendingInput
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError | TokenCacheError>
  readonly exchangeCode: (
    code: string,
    options?: {
      readonly codeVerifier?: string | Redacted.Redacted<string> | undefined
      readonly redirectUri?: string | undefined
    }
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError | TokenCacheError>
  /**
   * When the user's sign-in ends, if known: the refresh token's end (from `refresh_token_expires_in`, else the
   * sign-in time plus `refreshTokenLifetime`), after which the user must sign in again. None when nothing says.
   */
  readonly signInEndsAt: Effect.Effect<Option.Option<Date>, TokenCacheError>
}

/**
 * The authorization code provider service.
 *
 * @since 2.0.0
 * @category tags
 */
export class AuthorizationCode extends Context.Service<AuthorizationCode, Service>()("service-sdk/AuthorizationCode") {
  /**
   * {@link make}
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { FetchHttpClient } from "effect/http"
   * import { AuthorizationCode } from "@service-sdk/effect"
   *
   * const signInUrl = Effect.gen(function* () {
   *   const auth = yield* AuthorizationCode.make({ redirectUri: "https://my-app.example/callback" })
   *   const pending = yield* auth.beginAuthorization({ scope: ["user-read-private"] })
   *   return pending // send the user to pending.url; keep pending for auth.completeAuthorization
   * }).pipe(Effect.provide(FetchHttpClient.layer))
   * ```
   */
  static make(options?: Options) {
    return make(options)
  }
  /**
   * {@link layer}
   *
   * @example
   * ```ts
   * import { Effect, Layer } from "effect"
   * import { FetchHttpClient } from "effect/http"
   * import { AuthorizationCode, ServiceClient, TokenCache } from "@service-sdk/effect"
   *
   * const UserLive = Layer.unwrap(
   *   Effect.map(TokenCache.file(".service-sdk/token.json"), (tokenCache) =>
   *     ServiceClient.layer().pipe(Layer.provideMerge(AuthorizationCode.layer({ tokenCache })))
   *   )
   * ).pipe(Layer.provide(FetchHttpClient.layer))
   * ```
   */
  static layer(options?: Options) {
    return layer(options)
  }
  /** {@link parseResponseUrl} */
  static parseResponseUrl(
    url: string,
    options?: {
      readonly expectedState?: string | undefined
      readonly issuer?: string | undefined
      readonly requireIss?: boolean | undefined
    }
  ) {
    return OAuthClient.parseResponseUrl(url, options)
  }
}

/**
 * The provider and what its owner reads synchronously (the Promise facade's fast path).
 *
 * @internal
 */
export const makeOwned = (options: Options = {}) =>
  Effect.gen(function* () {
    const resolved = yield* Provider.resolve(options)
    const { oauth, protocol } = resolved
    const initial = secretValue(options.refreshToken)
    const renew = RefreshGrant.make(oauth, {
      initialRefreshToken: initial !== undefined && initial.trim() !== "" ? Redacted.make(initial.trim()) : undefined,
      noTokenMessage: "no token: call exchangeCode first (or pass a refreshToken)",
      name: "AuthorizationCode",
      refreshTokenLifetime: protocol.refreshTokenLifetime
    })
    const flight = yield* SingleFlight.make({
      name: "AuthorizationCode",
      cache: resolved.cache,
      skewMillis: resolved.skewMillis,
      refreshAheadMillis: resolved.refreshAheadMillis,
      renew: (current) => Effect.map(renew(current), (token) => Provider.bind(protocol, token)),
      accepts: Provider.accepts(protocol),
      whenCacheDown: "fail",
      entryGone: "keep"
    })
    const signIns = PendingSignIns.make()
    const keep = (token: TokenInfo) => {
      const bound = Provider.bind(protocol, token)
      return flight
        .store(bound)
        .pipe(Effect.andThen(Effect.logDebug("AuthorizationCode: code exchanged for tokens")), Effect.as(bound))
    }
    const service: Service = {
      getAccessToken: flight.getAccessToken,
      forceRefresh: flight.forceRefresh,
      redirectUri: protocol.redirectUri,
      getAuthorizationUrl: oauth.authorizationUrl,
      beginAuthorization: oauth.beginAuthorization,
      completeAuthorization: (callbackUrl, pending) =>
        Effect.flatMap(signIns.once(pending, oauth.completeAuthorization(callbackUrl, pending)), keep).pipe(
          Effect.withSpan("AuthorizationCode.completeAuthorization")
        ),
      signInEndsAt: Provider.signInEnd(resolved.cache, Provider.accepts(protocol), protocol.refreshTokenLifetime),
      exchangeCode: (code, exchange) =>
        Effect.flatMap(oauth.exchangeCode(code, exchange), keep).pipe(Effect.withSpan("AuthorizationCode.exchangeCode"))
    }
    return { service, peek: flight.peek }
  })

/**
 * The provider, over the `HttpClient` in context. A shared cache that cannot be reached fails the renewal with
 * TokenCacheError (a shared refresh token must not be used outside the fleet lock).
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Service, ConfigurationError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.map(makeOwned(options), ({ service }) => service)

/**
 * The provider as both services: `AuthorizationCode` (sign-in) and `TokenProvider` (for `ServiceClient`).
 *
 * @since 2.0.0
 * @category constructors
 */
export const layer = (
  options: Options = {}
): Layer.Layer<AuthorizationCode | TokenProvider.TokenProvider, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.map(make(options), (service) =>
      Context.make(AuthorizationCode, service).pipe(Context.add(TokenProvider.TokenProvider, service))
    )
  )

/**
 * The code from the URL the authorization server redirected to (a full URL or a bare query string).
 *
 * @since 2.0.0
 * @category parsing
 */
export const parseResponseUrl = OAuthClient.parseResponseUrl

/**
 * The types that go with {@link AuthorizationCode}.
 *
 * @since 2.0.0
 */
export declare namespace AuthorizationCode {
  export type Service = import("./AuthorizationCode.js").Service
  export type Options = import("./AuthorizationCode.js").Options
}
