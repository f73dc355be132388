/**
 * The OAuth protocol, stateless: one Effect per protocol step, each returning a `TokenInfo`, nothing cached and
 * nothing owned. For programs that keep tokens themselves (a web app with `UserTokens`, a CLI with its token file);
 * `AuthorizationCode` and `ClientCredentials` are token ownership (cache, single flight, renewal) built on it.
 *
 * @since 1.0.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { checkProviderOptions, lookupCredentials, resolveProtocol, resolveUrl } from "./internal/config.js"
import * as Protocol from "./internal/oauthClient.js"
import { type AuthenticationError, ConfigurationError, type TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * `clientId`/`clientSecret` fall back to `SERVICE_SDK_CLIENT_ID`/`SERVICE_SDK_CLIENT_SECRET` (no secret for a public
 * client), `authUrl` to `SERVICE_SDK_AUTH_URL` and then `https://accounts.service.example`, `redirectUri` to
 * `SERVICE_SDK_REDIRECT_URI`. Empty strings count as absent.
 *
 * @since 1.0.0
 * @category options
 */
export interface Options {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  /**
   * An app that keeps no secret (RFC 8252 §8.4): no `clientSecret` is required or read, token requests carry
   * `client_id` in the body and no Authorization header, and code exchanges must use PKCE. Default false.
   */
  readonly publicClient?: boolean | undefined
  readonly authUrl?: string | undefined
  /**
   * Needed by `exchangeCode`/`completeAuthorization` and sent in authorization URLs. The Service's rules apply
   * (checked here, a ConfigurationError otherwise): `https`, or `http` on a loopback IP literal (`127.0.0.1`,
   * `[::1]`), never `localhost`; a loopback URI may have no port (`authorizeLocal` then picks one per sign-in).
   */
  readonly redirectUri?: string | undefined
  /**
   * The authorization server's issuer identifier (RFC 9207): an authorization response whose `iss` differs is
   * refused. Default: `authUrl` without a trailing slash.
   *
   * @since 1.0.0
   */
  readonly issuer?: string | undefined
  /**
   * Refuse an authorization response without `iss` (RFC 9207 §2.4), for an authorization server that always sends
   * it (and advertises `authorization_response_iss_parameter_supported`): a response without it may come from
   * another server (a mix-up attack). Default false: a response without `iss` is accepted, one with it is checked.
   *
   * @since 1.0.0
   */
  readonly requireIss?: boolean | undefined
  /**
   * How long a sign-in lasts when the token endpoint does not say so with `refresh_token_expires_in`: the Service
   * ends a refresh token 180 days after the user signed in, and refreshing does not extend it (pass `"180 days"`).
   * With it the stored entry knows when the sign-in ends: a warning is logged within its last 7 days, and the
   * `invalid_grant` at its end says to sign in again. Default: unknown (only the server's word counts).
   *
   * @since 1.0.0
   */
  readonly refreshTokenLifetime?: Duration.DurationInput | undefined
  /** The default scope of authorization URLs and of `clientCredentials`. */
  readonly scope?: string | ReadonlyArray<string> | undefined
  /** Per attempt of a token request (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries of a token request after the first attempt, for transport errors, 5xx and 429 (default 3). */
  readonly maxRetries?: number | undefined
}

/**
 * The parameters of an authorization URL (RFC 6749 §4.1.1).
 *
 * @since 1.0.0
 * @category options
 */
export interface AuthorizationUrlOptions {
  readonly state?: string | undefined
  /** Overrides the client's scope for this authorization. */
  readonly scope?: string | ReadonlyArray<string> | undefined
  /** Ask the user to approve again even if they already did. */
  readonly showDialog?: boolean | undefined
  /** A PKCE S256 challenge (RFC 7636 §4.3), e.g. from `Pkce.make`. */
  readonly codeChallenge?: string | undefined
  /** The user to preselect on the consent page (`login_hint`). */
  readonly loginHint?: string | undefined
}

/**
 * The options of `beginAuthorization`: those of the authorization URL but the PKCE challenge (made fresh).
 *
 * @since 1.0.0
 * @category options
 */
export interface BeginAuthorizationOptions extends Omit<AuthorizationUrlOptions, "codeChallenge"> {
  /**
   * The redirect URI of this sign-in instead of the configured one: the configured loopback URI with the port its
   * server listens on, when it was configured without one (`authorizeLocal` sets it; RFC 8252 §7.3). It is kept in
   * the pending sign-in, so the code exchange sends the same one (RFC 6749 §4.1.3).
   */
  readonly redirectUri?: string | undefined
}

/**
 * The options of `exchangeCode`.
 *
 * @since 1.0.0
 * @category options
 */
export interface ExchangeCodeOptions {
  /** The PKCE verifier whose challenge went in the authorization URL (RFC 7636 §4.5). */
  readonly codeVerifier?: string | Redacted.Redacted<string> | undefined
}

/**
 * The options of `refresh` and `clientCredentials`.
 *
 * @since 1.0.0
 * @category options
 */
export interface ScopeOptions {
  /** Overrides the client's scope for this request. */
  readonly scope?: string | ReadonlyArray<string> | undefined
}

/**
 * A pending sign-in as `completeAuthorization` takes it back (the verifier in clear is accepted too).
 *
 * @since 1.0.0
 * @category models
 */
export interface PendingInput {
  readonly state: string
  readonly codeVerifier: string | Redacted.Redacted<string>
  /** The sign-in's own redirect URI (see `BeginAuthorizationOptions.redirectUri`), when not the configured one. */
  readonly redirectUri?: string | undefined
}

/**
 * A sign-in in progress: send the user to `url`, keep `state` and `codeVerifier` server-side until the callback, then
 * pass them to `completeAuthorization`.
 *
 * @since 1.0.0
 * @category models
 */
export interface PendingAuthorization {
  readonly url: string
  readonly state: string
  readonly codeVerifier: Redacted.Redacted<string>
  /**
   * The redirect URI of this sign-in, when it is not the configured one (see `BeginAuthorizationOptions`).
   *
   * @since 1.0.0
   */
  readonly redirectUri?: string | undefined
}

/**
 * The protocol steps. Every token comes back as a `TokenInfo` (expiry from the Effect `Clock`); none is kept, and
 * nothing is remembered between calls (a pending sign-in's single use is its owner's: `AuthorizationCode`, or your
 * session store).
 *
 * @since 1.0.0
 * @category models
 */
export interface Service {
  /**
   * `{authUrl}/authorize?response_type=code&client_id=..&redirect_uri=..[&scope=..][&state=..][&show_dialog=true]`
   * `[&code_challenge=..&code_challenge_method=S256][&login_hint=..]`
   */
  readonly authorizationUrl: (options?: AuthorizationUrlOptions) => string
  /** A fresh random state (unless given) and PKCE pair, and the authorization URL that carries them. */
  readonly beginAuthorization: (options?: BeginAuthorizationOptions) => Effect.Effect<PendingAuthorization>
  /**
   * The callback URL (or its query) of a pending sign-in: its state is checked before anything else, then an
   * `error` parameter or a missing code fails, then the code is exchanged with the pending verifier.
   */
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: PendingInput
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError>
  /** The authorization code grant (RFC 6749 §4.1.3); a public client must pass the PKCE `codeVerifier`. */
  readonly exchangeCode: (
    code: string,
    options?: ExchangeCodeOptions
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError>
  /** The refresh token grant (RFC 6749 §6); the given refresh token is kept when the response carries none. */
  readonly refresh: (
    refreshToken: string | Redacted.Redacted<string>,
    options?: ScopeOptions
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>
  /** The client credentials grant (RFC 6749 §4.4): an app token, for a confidential client. */
  readonly clientCredentials: (options?: ScopeOptions) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>
}

/**
 * An `OAuthClient` on the `HttpClient` in context. Fails with `ConfigurationError` for a missing client id (or
 * secret, for a confidential client) or a bad option.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { OAuthClient } from "@service-sdk/effect"
 *
 * // sign-in for a user whose tokens you keep yourself
 * const signIn = Effect.gen(function* () {
 *   const oauth = yield* OAuthClient.make({ redirectUri: "http://127.0.0.1:8080/callback" })
 *   const pending = yield* oauth.beginAuthorization()
 *   // … send the user to pending.url, keep pending server-side, then on the callback:
 *   return yield* oauth.completeAuthorization("http://127.0.0.1:8080/callback?code=..&state=..", pending)
 * }).pipe(Effect.provide(NodeHttpClient.layerUndici))
 * ```
 *
 * @since 1.0.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    if (typeof options !== "object" || options === null) {
      return yield* new ConfigurationError({ message: "OAuthClient options must be an object" })
    }
    return Protocol.fromResolved(yield* resolveProtocol(options), yield* HttpClient.HttpClient)
  })

/**
 * The client and authorization server {@link make} would use for `options`, nothing required yet.
 *
 * @since 1.0.0
 * @category options
 */
export interface ResolvedClient {
  /** The `clientId` option, else `SERVICE_SDK_CLIENT_ID`; none when neither. */
  readonly clientId: Option.Option<string>
  /** The `clientSecret` option, else `SERVICE_SDK_CLIENT_SECRET`; always none for a public client. */
  readonly clientSecret: Option.Option<Redacted.Redacted<string>>
  /** The `authUrl` option, else `SERVICE_SDK_AUTH_URL`, else the Service's; checked, without a trailing slash. */
  readonly authUrl: string
}

/**
 * Which client and authorization server {@link make} would use: each explicit option, else its environment variable
 * (through Effect `Config`; empty strings count as absent), else the default `authUrl`. A public client's secret is
 * neither read nor returned. Missing credentials are `Option.none()` here, for a tool that words its own message
 * (the CLI names its flags); a bad option is the ConfigurationError {@link make} would fail with.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { OAuthClient } from "@service-sdk/effect"
 *
 * const banner = Effect.map(OAuthClient.resolveClient(), (client) =>
 *   `client ${Option.getOrElse(client.clientId, () => "(not set)")} at ${client.authUrl}`
 * )
 * ```
 *
 * @since 1.0.0
 * @category options
 */
export const resolveClient = (
  options: Pick<Options, "clientId" | "clientSecret" | "publicClient" | "authUrl"> = {}
): Effect.Effect<ResolvedClient, ConfigurationError> =>
  Effect.gen(function* () {
    yield* checkProviderOptions(options)
    const credentials = yield* lookupCredentials(options)
    return { ...credentials, authUrl: yield* resolveUrl(options.authUrl, "authUrl") }
  })

/**
 * The OAuth protocol steps as a service (`yield* OAuthClient`), with its constructors.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { OAuthClient } from "@service-sdk/effect"
 *
 * const OAuthLive = OAuthClient.layer({ scope: "catalog-read" }).pipe(Layer.provide(NodeHttpClient.layerUndici))
 * const appToken = Effect.flatMap(OAuthClient, (oauth) => oauth.clientCredentials()).pipe(
 *   Effect.provide(OAuthLive)
 * )
 * ```
 *
 * @since 1.0.0
 * @category tags
 */
export class OAuthClient extends Context.Tag("service-sdk/OAuthClient")<OAuthClient, Service>() {
  /**
   * The tag itself, under the name it had when this module was a namespace (`OAuthClient.OAuthClient`).
   *
   * @since 1.0.0
   */
  static readonly OAuthClient: typeof OAuthClient = OAuthClient
  /**
   * {@link make}.
   *
   * @since 1.0.0
   */
  static readonly make = make
  /**
   * {@link make} as a `Layer` of {@link OAuthClient}.
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Effect, Layer } from "effect"
   * import { OAuthClient } from "@service-sdk/effect"
   *
   * const OAuthLive = OAuthClient.layer({ scope: "catalog-read" }).pipe(Layer.provide(NodeHttpClient.layerUndici))
   * const appToken = Effect.flatMap(OAuthClient, (oauth) => oauth.clientCredentials()).pipe(Effect.provide(OAuthLive))
   * ```
   *
   * @since 1.0.0
   */
  static layer(options: Options = {}): Layer.Layer<OAuthClient, ConfigurationError, HttpClient.HttpClient> {
    return Layer.effect(OAuthClient, make(options))
  }
  /**
   * {@link resolveClient}: the client and authorization server `make` would use (options, then the environment).
   *
   * @since 1.0.0
   */
  static readonly resolveClient = resolveClient
}

/**
 * @since 1.0.0
 */
export declare namespace OAuthClient {
  /** The tag's type, under its namespace-era name (`OAuthClient.OAuthClient`). @since 1.0.0 */
  export type OAuthClient = OAuthClientTag
  /** @since 1.0.0 */
  export type Service = OAuthClientService
  /** @since 1.0.0 */
  export type Options = OAuthClientOptions
  /** @since 1.0.0 */
  export type AuthorizationUrlOptions = OAuthClientAuthorizationUrlOptions
  /** @since 1.0.0 */
  export type BeginAuthorizationOptions = OAuthClientBeginAuthorizationOptions
  /** @since 1.0.0 */
  export type ExchangeCodeOptions = OAuthClientExchangeCodeOptions
  /** @since 1.0.0 */
  export type ScopeOptions = OAuthClientScopeOptions
  /** @since 1.0.0 */
  export type PendingAuthorization = OAuthClientPendingAuthorization
  /** @since 1.0.0 */
  export type PendingInput = OAuthClientPendingInput
  /** @since 1.0.0 */
  export type ResolvedClient = OAuthClientResolvedClient
}

type OAuthClientTag = OAuthClient
type OAuthClientService = Service
type OAuthClientOptions = Options
type OAuthClientResolvedClient = ResolvedClient
type OAuthClientAuthorizationUrlOptions = AuthorizationUrlOptions
type OAuthClientBeginAuthorizationOptions = BeginAuthorizationOptions
type OAuthClientExchangeCodeOptions = ExchangeCodeOptions
type OAuthClientScopeOptions = ScopeOptions
type OAuthClientPendingAuthorization = PendingAuthorization
type OAuthClientPendingInput = PendingInput
