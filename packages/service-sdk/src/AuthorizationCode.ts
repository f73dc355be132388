/**
 * The authorization code grant with refresh tokens (RFC 6749 §4.1, §6): user-scoped tokens.
 *
 * @since 1.0.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as ClientCredentials from "./ClientCredentials.js"
import { secretValue } from "./internal/config.js"
import * as Protocol from "./internal/oauthClient.js"
import * as Provider from "./internal/provider.js"
import * as RefreshGrant from "./internal/refreshGrant.js"
import * as PendingSignIns from "./internal/pendingSignIns.js"
import type * as OAuthClient from "./OAuthClient.js"
import type { AuthenticationError, ConfigurationError, TokenCacheError, TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"
import type { TokenProvider, TokenProviderService } from "./TokenProvider.js"

/**
 * The options of `ClientCredentials`, plus the protocol's sign-in options (`redirectUri`, from
 * `SERVICE_SDK_REDIRECT_URI`; `publicClient`; `issuer`; `requireIss`; `refreshTokenLifetime`), and a refresh token to start from
 * (for programs that stored one).
 *
 * @since 1.0.0
 * @category options
 */
export interface Options
  extends ClientCredentials.Options,
    Pick<OAuthClient.Options, "redirectUri" | "publicClient" | "issuer" | "requireIss" | "refreshTokenLifetime"> {
  readonly refreshToken?: string | Redacted.Redacted<string> | undefined
}

/**
 * The parameters of an authorization URL: the protocol's (`OAuthClient.AuthorizationUrlOptions`).
 *
 * @since 1.0.0
 * @category options
 */
export type AuthorizationUrlOptions = OAuthClient.AuthorizationUrlOptions

/**
 * @since 1.0.0
 * @category options
 */
export type ExchangeCodeOptions = OAuthClient.ExchangeCodeOptions

/**
 * @since 1.0.0
 * @category options
 */
export type BeginAuthorizationOptions = OAuthClient.BeginAuthorizationOptions

/**
 * A sign-in in progress: send the user to `url`, keep `state` and `codeVerifier` (server-side, never in the page)
 * until the callback, then pass them to `completeAuthorization`.
 *
 * @since 1.0.0
 * @category models
 */
export type PendingAuthorization = OAuthClient.PendingAuthorization

/**
 * @since 1.0.0
 * @category models
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
   * @since 1.0.0
   */
  readonly beginAuthorization: (options?: BeginAuthorizationOptions) => Effect.Effect<PendingAuthorization>
  /**
   * Finishes a sign-in: `parseResponseUrl` with the pending state, then `exchangeCode` with its verifier. The
   * tokens are cached. Single-use: a pending sign-in is used up by the token endpoint's answer (a token or a
   * refusal); after a transport failure or a 5xx the same callback can be completed again.
   *
   * @since 1.0.0
   */
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: OAuthClient.PendingInput
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError | TokenCacheError>
  /**
   * Whether the provider is a public client (no secret).
   *
   * @since 1.0.0
   */
  readonly publicClient: boolean
  /** The redirect URI the provider was configured with, if any. */
  readonly redirectUri: string | undefined
  /**
   * The authorization server the provider was configured with (option, `SERVICE_SDK_AUTH_URL` or the default),
   * without a trailing slash: the `auth_url` its cache entries are bound to.
   *
   * @since 1.0.0
   */
  readonly authUrl: string
  /**
   * When the user's sign-in ends, if known: the end of the refresh token (from `refresh_token_expires_in`, else the
   * sign-in time plus `refreshTokenLifetime`), after which the user must sign in again. None when nothing says.
   *
   * @since 1.0.0
   */
  readonly signInEndsAt: Effect.Effect<Option.Option<Date>, TokenCacheError>
}

/**
 * The code from the URL the authorization server redirected to (RFC 6749 §4.1.2). Accepts a full URL or a bare query
 * string. Rules, in order: a repeated `state`, `code`, `error` or `iss` parameter fails (§3.1); when `expectedState`
 * is given, a missing or different `state` fails ("state mismatch"; §10.12, CSRF); when `issuer` is given, an `iss`
 * that differs fails (RFC 9207; `completeAuthorization` always checks it against the configured issuer), and with
 * `requireIss` a missing `iss` fails too; an `error`
 * parameter fails (§4.1.2.1), its `error_description` without control characters and capped at 512 characters; no
 * `code` fails.
 *
 * (The facade's `AsyncAuthorizationCode.parseResponseUrl` reads it here; everyone else through
 * `AuthorizationCode.parseResponseUrl`.)
 *
 * @since 1.0.0
 * @category parsing
 */
export const parseResponseUrl: (
  url: string,
  options?: {
    readonly expectedState?: string | undefined
    readonly issuer?: string | undefined
    readonly requireIss?: boolean | undefined
  }
) => Effect.Effect<string, AuthenticationError> = Protocol.parseResponseUrl

/**
 * The provider and what its owner reads synchronously (the Promise facade's fast path).
 *
 * @internal
 */
export const makeOwned = (options: Options = {}) =>
  Effect.gen(function* () {
    const resolved = yield* Provider.resolve(options)
    const { oauth, redirectUri } = resolved
    const bootstrap = secretValue(options.refreshToken)
    const refresh = RefreshGrant.make(oauth, {
      initialRefreshToken: bootstrap ? Redacted.make(bootstrap) : undefined,
      noTokenMessage: "no token: call exchangeCode first (or pass a refreshToken)",
      refreshTokenLifetime: resolved.refreshTokenLifetime,
      name: "AuthorizationCode"
    })
    // A shared refresh token is used only under the fleet lock: no renewal while the cache is unreachable.
    const { peek, service, store } = yield* Provider.makeService("AuthorizationCode", resolved, refresh, "fail")
    const signIns = PendingSignIns.make()

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
      pending: OAuthClient.PendingInput
    ) {
      const token = yield* keep(yield* signIns.once(pending, oauth.completeAuthorization(callbackUrl, pending)))
      yield* Effect.logDebug("AuthorizationCode: code exchanged for tokens")
      return token
    })

    const authorizationCode: AuthorizationCodeService = {
      ...service,
      getAuthorizationUrl: oauth.authorizationUrl,
      exchangeCode,
      beginAuthorization: oauth.beginAuthorization,
      completeAuthorization,
      publicClient: resolved.publicClient,
      redirectUri,
      authUrl: resolved.authUrl,
      signInEndsAt: Provider.signInEnd(resolved.cache, Provider.accepts(resolved), resolved.refreshTokenLifetime)
    }
    return { service: authorizationCode, peek }
  })

/**
 * An authorization-code provider in the current `Scope` (background renewals and retried cache writes run in it).
 */
const make = (
  options: Options = {}
): Effect.Effect<AuthorizationCodeService, ConfigurationError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.map(makeOwned(options), ({ service }) => service)

/**
 * The provider and the tag it stands under. `layer` supplies it as both `AuthorizationCode` and `TokenProvider`.
 *
 * @since 1.0.0
 * @category tags
 */
export class AuthorizationCode extends Context.Tag("service-sdk/AuthorizationCode")<
  AuthorizationCode,
  AuthorizationCodeService
>() {
  /**
   * An authorization-code provider (user-scoped tokens): `getAuthorizationUrl`/`beginAuthorization` for the sign-in,
   * `exchangeCode`/`completeAuthorization` for the callback, then `getAccessToken` renews with the refresh token
   * (the cached one, else the `refreshToken` option). Background renewals run in the `Scope`. Fails with
   * `ConfigurationError` for missing or bad options.
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Effect } from "effect"
   * import { AuthorizationCode } from "@service-sdk/effect"
   *
   * // a refresh token saved from an earlier sign-in
   * const token = Effect.gen(function* () {
   *   const provider = yield* AuthorizationCode.make({ refreshToken: process.env.MY_APP_REFRESH_TOKEN })
   *   return yield* provider.getAccessToken
   * }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
   * ```
   *
   * @since 1.0.0
   */
  static readonly make = make
  /**
   * The code from the URL the authorization server redirected to; fails with `AuthenticationError` on a repeated
   * `state`/`code`/`error`/`iss`, an `error` parameter, a missing code, (with `expectedState`) a missing or different
   * state, or (with `issuer`) a different `iss`.
   *
   * @since 1.0.0
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
   * import { AuthorizationCode, ServiceClient } from "@service-sdk/effect"
   *
   * const UserClient = ServiceClient.layer().pipe(
   *   Layer.provideMerge(AuthorizationCode.layer({ redirectUri: "http://127.0.0.1:8080/callback" })),
   *   Layer.provide(NodeHttpClient.layerUndici)
   * )
   * ```
   *
   * @since 1.0.0
   */
  static layer(
    options: Options = {}
  ): Layer.Layer<AuthorizationCode | TokenProvider, ConfigurationError, HttpClient.HttpClient> {
    return Provider.layer(AuthorizationCode, make(options))
  }
}

/**
 * @since 1.0.0
 */
export declare namespace AuthorizationCode {
  /** @since 1.0.0 */
  export type Service = AuthorizationCodeService
  /** @since 1.0.0 */
  export type Options = AuthorizationCodeOptions
  /** @since 1.0.0 */
  export type UrlOptions = AuthorizationUrlOptions
  /** @since 1.0.0 */
  export type ExchangeOptions = ExchangeCodeOptions
  /** @since 1.0.0 */
  export type BeginOptions = BeginAuthorizationOptions
  /** @since 1.0.0 */
  export type Pending = PendingAuthorization
}

type AuthorizationCodeOptions = Options
