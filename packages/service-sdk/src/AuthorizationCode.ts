/**
 * The authorization code grant with refresh tokens (RFC 6749 §4.1, §6): user-scoped tokens.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { refreshTokenLifetimeOption, resolveIssuer, resolveRedirectUri, secretValue } from "./internal/config.js"
import * as Protocol from "./internal/oauthClient.js"
import * as Provider from "./internal/provider.js"
import * as RefreshGrant from "./internal/refreshGrant.js"
import * as SignIn from "./internal/signIn.js"
import type { AuthenticationError, ConfigurationError, TokenCacheError, TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"
import { TokenProvider, type TokenProviderService } from "./TokenProvider.js"

/**
 * The options of `ClientCredentials`, plus the redirect URI (`SERVICE_SDK_REDIRECT_URI`) and a refresh token to start
 * from (for programs that stored one).
 *
 * @since 0.1.0
 */
export interface Options extends Provider.ProviderOptions {
  /**
   * The Service's rules apply (a ConfigurationError otherwise): `https`, or `http` on a loopback IP literal
   * (`127.0.0.1`, `[::1]`), never `localhost`; a loopback URI may have no port (`authorizeLocal` then picks one per
   * sign-in).
   */
  readonly redirectUri?: string | undefined
  /**
   * The authorization server's issuer identifier (RFC 9207): a callback whose `iss` differs is refused. Default:
   * `authUrl` without a trailing slash.
   *
   * @since 0.4.0
   */
  readonly issuer?: string | undefined
  /**
   * How long a sign-in lasts when the token endpoint does not say so with `refresh_token_expires_in`: the Service
   * ends a refresh token 180 days after the user signed in, and refreshing does not extend it (pass `"180 days"`).
   * With it the stored entry knows when the sign-in ends: a warning is logged within its last 7 days, and the
   * `invalid_grant` at its end says to sign in again. Default: unknown (only the server's word counts).
   *
   * @since 0.4.0
   */
  readonly refreshTokenLifetime?: Duration.DurationInput | undefined
  readonly refreshToken?: string | Redacted.Redacted<string> | undefined
  /**
   * An app that keeps no secret (a distributed CLI, a desktop app; RFC 8252 §8.4): `clientSecret` is neither
   * required nor read from the environment, token requests carry `client_id` in the body, and code exchanges must
   * use PKCE. Default false.
   *
   * @since 0.2.0
   */
  readonly publicClient?: boolean | undefined
}

/**
 * @since 0.1.0
 */
export interface AuthorizationUrlOptions {
  readonly state?: string | undefined
  /** Overrides the provider's scope for this authorization. */
  readonly scope?: string | ReadonlyArray<string> | undefined
  /** Ask the user to approve again even if they already did. */
  readonly showDialog?: boolean | undefined
  /**
   * A PKCE S256 challenge (RFC 7636 §4.3), e.g. from `Pkce.make`; adds `code_challenge` and
   * `code_challenge_method=S256`.
   *
   * @since 0.2.0
   */
  readonly codeChallenge?: string | undefined
}

/**
 * @since 0.2.0
 */
export interface ExchangeCodeOptions {
  /** The PKCE verifier whose challenge went in the authorization URL (RFC 7636 §4.5). */
  readonly codeVerifier?: string | Redacted.Redacted<string> | undefined
}

/**
 * @since 0.2.0
 */
export interface BeginAuthorizationOptions {
  readonly scope?: string | ReadonlyArray<string> | undefined
  readonly showDialog?: boolean | undefined
  /** Random (256 bits) when not given. */
  readonly state?: string | undefined
  /**
   * The redirect URI of this sign-in instead of the configured one: the configured loopback URI with the port its
   * server listens on, when it was configured without one (`authorizeLocal` sets it; RFC 8252 §7.3). It is kept in
   * the pending sign-in, so the code exchange sends the same one (RFC 6749 §4.1.3).
   *
   * @since 0.4.0
   */
  readonly redirectUri?: string | undefined
}

/**
 * A sign-in in progress: send the user to `url`, keep `state` and `codeVerifier` (server-side, never in the page)
 * until the callback, then pass them to `completeAuthorization`.
 *
 * @since 0.2.0
 */
export interface PendingAuthorization {
  readonly url: string
  readonly state: string
  readonly codeVerifier: Redacted.Redacted<string>
  /**
   * The redirect URI of this sign-in, when it is not the configured one (see `BeginAuthorizationOptions`).
   *
   * @since 0.4.0
   */
  readonly redirectUri?: string | undefined
}

/**
 * @since 0.1.0
 */
export interface AuthorizationCodeService extends TokenProviderService {
  /**
   * `{authUrl}/authorize?response_type=code&client_id=..&redirect_uri=..[&scope=..][&state=..][&show_dialog=true]`
   * `[&code_challenge=..&code_challenge_method=S256]`
   */
  readonly getAuthorizationUrl: (options?: AuthorizationUrlOptions) => string
  /**
   * Exchanges a code from the redirect for tokens, and caches them. A public client must pass the PKCE
   * `codeVerifier` (ConfigurationError otherwise).
   */
  readonly exchangeCode: (
    code: string,
    options?: ExchangeCodeOptions
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError | TokenCacheError>
  /**
   * Starts a sign-in: a fresh random state (unless given) and PKCE pair, and the authorization URL that carries
   * them (RFC 9700 §2.1.1: PKCE for every client kind).
   *
   * @since 0.2.0
   */
  readonly beginAuthorization: (options?: BeginAuthorizationOptions) => Effect.Effect<PendingAuthorization>
  /**
   * Finishes a sign-in: `parseResponseUrl` with the pending state, then `exchangeCode` with its verifier. The
   * tokens are cached.
   *
   * @since 0.2.0
   */
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: {
      readonly state: string
      readonly codeVerifier: string | Redacted.Redacted<string>
      readonly redirectUri?: string | undefined
    }
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError | TokenCacheError>
  /**
   * Whether the provider is a public client (no secret).
   *
   * @since 0.2.0
   */
  readonly publicClient: boolean
  /** The redirect URI the provider was configured with, if any. */
  readonly redirectUri: string | undefined
  /**
   * When the user's sign-in ends, if known: the end of the refresh token (from `refresh_token_expires_in`, else the
   * sign-in time plus `refreshTokenLifetime`), after which the user must sign in again. None when nothing says.
   *
   * @since 0.4.0
   */
  readonly signInEndsAt: Effect.Effect<Option.Option<Date>, TokenCacheError>
}

/**
 * The code from the URL the authorization server redirected to (RFC 6749 §4.1.2). Accepts a full URL or a bare query
 * string. Rules, in order: a repeated `state`, `code`, `error` or `iss` parameter fails (§3.1); when `expectedState`
 * is given, a missing or different `state` fails ("state mismatch"; §10.12, CSRF); when `issuer` is given, an `iss`
 * that differs fails (RFC 9207; `completeAuthorization` always checks it against the configured issuer); an `error`
 * parameter fails (§4.1.2.1), its `error_description` without control characters and capped at 512 characters; no
 * `code` fails.
 *
 * (The facade's `AsyncAuthorizationCode.parseResponseUrl` reads it here; everyone else through
 * `AuthorizationCode.parseResponseUrl`.)
 *
 * @since 0.1.0
 */
export const parseResponseUrl: (
  url: string,
  options?: { readonly expectedState?: string | undefined; readonly issuer?: string | undefined }
) => Effect.Effect<string, AuthenticationError> = Protocol.parseResponseUrl

/**
 * An authorization-code provider: the protocol steps of an `OAuthClient` (sign-in URLs, code exchange with PKCE) and
 * ownership of the user's token: served from `tokenCache` and renewed with the refresh token, one request however
 * many callers wait. See {@link AuthorizationCode.make}.
 */
const make = (
  options: Options = {}
): Effect.Effect<AuthorizationCodeService, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const resolved = yield* Provider.resolve(options)
    const redirectUri = yield* resolveRedirectUri(options.redirectUri)
    const issuer = yield* resolveIssuer(options.issuer, resolved.authUrl)
    const refreshTokenLifetime = yield* refreshTokenLifetimeOption(options.refreshTokenLifetime)
    const oauth = Protocol.make({ ...resolved, redirectUri, issuer, refreshTokenLifetime }, resolved.endpoint)
    const bootstrap = secretValue(options.refreshToken)
    const initialRefreshToken = bootstrap ? Redacted.make(bootstrap) : undefined

    // TODO(A): the refresh grant could be `oauth.refresh` once refreshGrant.ts takes a protocol instead of an endpoint
    const refresh = RefreshGrant.make(resolved.endpoint, {
      initialRefreshToken,
      noTokenMessage: "no token: call exchangeCode first (or pass a refreshToken)",
      refreshTokenLifetime,
      name: "AuthorizationCode"
    })
    // A shared refresh token is used only under the fleet lock: no renewal while the cache is unreachable.
    const { service, store } = yield* Provider.makeService("AuthorizationCode", resolved, refresh, "fail")

    const keep = (token: TokenInfo) => Effect.as(store(token), token)

    const exchangeCode = Effect.fn("AuthorizationCode.exchangeCode")(function* (
      code: string,
      exchangeOptions: ExchangeCodeOptions = {}
    ) {
      const token = yield* keep(yield* oauth.exchangeCode(code, exchangeOptions))
      yield* Effect.logDebug("AuthorizationCode: code exchanged for tokens")
      return token
    })

    const completeAuthorization = Effect.fn("AuthorizationCode.completeAuthorization")(function* (
      callbackUrl: string,
      pending: {
        readonly state: string
        readonly codeVerifier: string | Redacted.Redacted<string>
        readonly redirectUri?: string | undefined
      }
    ) {
      const token = yield* keep(yield* oauth.completeAuthorization(callbackUrl, pending))
      yield* Effect.logDebug("AuthorizationCode: code exchanged for tokens")
      return token
    })

    const authorizationCode: AuthorizationCodeService = Object.assign(service, {
      getAuthorizationUrl: oauth.authorizationUrl,
      exchangeCode,
      beginAuthorization: oauth.beginAuthorization,
      completeAuthorization,
      publicClient: resolved.publicClient,
      redirectUri,
      signInEndsAt: SignIn.signInEnd(resolved.cache, Provider.accepts(resolved), refreshTokenLifetime)
    })
    return authorizationCode
  })

/**
 * The provider and the tag it stands under. `layer` supplies it as both `AuthorizationCode` and `TokenProvider`.
 *
 * @since 0.1.0
 */
export class AuthorizationCode extends Context.Tag("service-sdk/AuthorizationCode")<
  AuthorizationCode,
  AuthorizationCodeService
>() {
  /**
   * An authorization-code provider (user-scoped tokens): `getAuthorizationUrl`/`beginAuthorization` for the sign-in,
   * `exchangeCode`/`completeAuthorization` for the callback, then `getAccessToken` renews with the refresh token
   * (the cached one, else the `refreshToken` option). Fails with `ConfigurationError` for missing or bad options.
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Effect } from "effect"
   * import { AuthorizationCode } from "service-sdk"
   *
   * // a refresh token saved from an earlier sign-in
   * const token = Effect.gen(function* () {
   *   const provider = yield* AuthorizationCode.make({ refreshToken: process.env.MY_APP_REFRESH_TOKEN })
   *   return yield* provider.getAccessToken
   * }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
   * ```
   *
   * @since 0.1.0
   */
  static readonly make = make
  /**
   * The code from the URL the authorization server redirected to; fails with `AuthenticationError` on a repeated
   * `state`/`code`/`error`/`iss`, an `error` parameter, a missing code, (with `expectedState`) a missing or different
   * state, or (with `issuer`) a different `iss`.
   *
   * @since 0.1.0
   */
  static readonly parseResponseUrl = parseResponseUrl
  /**
   * {@link AuthorizationCode.make} as a `Layer` that provides both `AuthorizationCode` (sign-in) and `TokenProvider`
   * (for `ServiceClient.layer()`).
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Layer } from "effect"
   * import { AuthorizationCode, ServiceClient } from "service-sdk"
   *
   * const UserClient = ServiceClient.layer().pipe(
   *   Layer.provideMerge(AuthorizationCode.layer({ redirectUri: "http://127.0.0.1:8080/callback" })),
   *   Layer.provide(NodeHttpClient.layerUndici)
   * )
   * ```
   *
   * @since 0.1.0
   */
  static layer(
    options: Options = {}
  ): Layer.Layer<AuthorizationCode | TokenProvider, ConfigurationError, HttpClient.HttpClient> {
    // scoped: background renewals (`refreshAhead`) end with the layer
    return Layer.scopedContext(
      Effect.map(make(options), (service) =>
        Context.make(AuthorizationCode, service).pipe(Context.add(TokenProvider, service))
      )
    )
  }
}

/**
 * @since 0.1.0
 */
export declare namespace AuthorizationCode {
  /** @since 0.1.0 */
  export type Service = AuthorizationCodeService
  /** @since 0.1.0 */
  export type Options = AuthorizationCodeOptions
  /** @since 0.1.0 */
  export type UrlOptions = AuthorizationUrlOptions
  /** @since 0.2.0 */
  export type ExchangeOptions = ExchangeCodeOptions
  /** @since 0.2.0 */
  export type BeginOptions = BeginAuthorizationOptions
  /** @since 0.2.0 */
  export type Pending = PendingAuthorization
}

type AuthorizationCodeOptions = Options
