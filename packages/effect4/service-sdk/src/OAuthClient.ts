/**
 * The OAuth protocol, stateless: one Effect per protocol step, nothing cached, nothing owned. What a web app, a CLI
 * or another library needs when it keeps tokens itself; the providers (`ClientCredentials`, `AuthorizationCode`,
 * `UserTokens`) are token ownership built on it.
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as HttpClient from "effect/http/HttpClient"
import {
  lookupCredentials,
  optionalBoolean,
  optionalSecret,
  optionalString,
  type ProtocolOptions,
  resolveProtocol,
  resolveUrl
} from "./internal/config.js"
import * as Protocol from "./internal/oauthClient.js"
import * as TokenEndpoint from "./internal/tokenEndpoint.js"
import type { AuthenticationError, ConfigurationError, TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The protocol's options (declared once; the providers extend them).
 *
 * @since 2.0.0
 * @category options
 */
export type Options = ProtocolOptions

/**
 * The options of an authorization URL.
 *
 * @since 2.0.0
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
 * The options of `beginAuthorization`.
 *
 * @since 2.0.0
 * @category options
 */
export interface BeginAuthorizationOptions {
  /** This sign-in's redirect URI, instead of the client's (`authorizeLocal`'s ephemeral loopback port). */
  readonly redirectUri?: string | undefined
  readonly scope?: string | ReadonlyArray<string> | undefined
  readonly showDialog?: boolean | undefined
  /** Random when not given. */
  readonly state?: string | undefined
  /** The user to preselect on the consent page (`login_hint`). */
  readonly loginHint?: string | undefined
}

/**
 * A sign-in begun: the URL to send the user to, and what `completeAuthorization` needs back.
 *
 * @since 2.0.0
 * @category models
 */
export interface PendingAuthorization {
  readonly url: string
  readonly state: string
  readonly codeVerifier: Redacted.Redacted<string>
  /** Set when the sign-in was begun with its own redirect URI: the code exchange sends it. */
  readonly redirectUri?: string | undefined
}

/**
 * A pending sign-in as `completeAuthorization` takes it back (kept server-side, e.g. in a session).
 *
 * @since 2.0.0
 * @category models
 */
export interface PendingInput {
  readonly state: string
  readonly codeVerifier: string | Redacted.Redacted<string>
  /** The sign-in's own redirect URI, when it was begun with one. */
  readonly redirectUri?: string | undefined
}

/**
 * The protocol steps of one client.
 *
 * @since 2.0.0
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
   * The callback URL (or its query) of a pending sign-in: its state is checked before anything else, then `iss`,
   * an `error` parameter or a missing code, then the code is exchanged with the pending verifier. Single-use.
   */
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: PendingInput
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError>
  /** The authorization code grant (RFC 6749 §4.1.3); a public client must pass the PKCE `codeVerifier`. */
  readonly exchangeCode: (
    code: string,
    options?: {
      readonly codeVerifier?: string | Redacted.Redacted<string> | undefined
      /** The redirect URI the code was issued for, when not the client's. */
      readonly redirectUri?: string | undefined
    }
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError>
  /** The refresh token grant (RFC 6749 §6); the given refresh token is kept when the response carries none. */
  readonly refresh: (
    refreshToken: string | Redacted.Redacted<string>,
    options?: { readonly scope?: string | ReadonlyArray<string> | undefined }
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>
  /** The client credentials grant (RFC 6749 §4.4): an app token, for a confidential client. */
  readonly clientCredentials: (options?: {
    readonly scope?: string | ReadonlyArray<string> | undefined
  }) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>
}

/**
 * The protocol service.
 *
 * @since 2.0.0
 * @category tags
 */
export class OAuthClient extends Context.Service<OAuthClient, Service>()("service-sdk/OAuthClient") {
  /** The service key itself, under the name the Effect 3 line also keeps (`OAuthClient.OAuthClient`). */
  static get OAuthClient(): typeof OAuthClient {
    return OAuthClient
  }
  /** {@link make} */
  static make(options?: Options) {
    return make(options)
  }
  /** {@link layer} */
  static layer(options?: Options) {
    return layer(options)
  }
  /** {@link resolveClient} */
  static resolveClient(options?: Pick<Options, "clientId" | "clientSecret" | "publicClient" | "authUrl">) {
    return resolveClient(options)
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
    return Protocol.parseResponseUrl(url, options)
  }
}

/**
 * The types that go with {@link OAuthClient}.
 *
 * @since 2.0.0
 */
export declare namespace OAuthClient {
  export type Service = import("./OAuthClient.js").Service
  export type Options = import("./OAuthClient.js").Options
  export type AuthorizationUrlOptions = import("./OAuthClient.js").AuthorizationUrlOptions
  export type BeginAuthorizationOptions = import("./OAuthClient.js").BeginAuthorizationOptions
  export type PendingAuthorization = import("./OAuthClient.js").PendingAuthorization
  export type PendingInput = import("./OAuthClient.js").PendingInput
  export type ResolvedClient = import("./OAuthClient.js").ResolvedClient
}

/**
 * The client and authorization server {@link make} would use for `options`, nothing required yet.
 *
 * @since 2.0.0
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
 * neither read nor returned. Missing credentials are `Option.none()` here, for a tool that words its own message; a
 * bad option is the ConfigurationError {@link make} would fail with.
 *
 * @since 2.0.0
 * @category options
 */
export const resolveClient = (
  options: Pick<Options, "clientId" | "clientSecret" | "publicClient" | "authUrl"> = {}
): Effect.Effect<ResolvedClient, ConfigurationError> =>
  Effect.gen(function* () {
    const clientId = yield* optionalString(options.clientId, "clientId")
    const clientSecret = yield* optionalSecret(options.clientSecret, "clientSecret")
    const publicClient = yield* optionalBoolean(options.publicClient, "publicClient")
    const authUrl = yield* optionalString(options.authUrl, "authUrl")
    const credentials = yield* lookupCredentials({ clientId, clientSecret, publicClient })
    return { ...credentials, authUrl: yield* resolveUrl(authUrl, "authUrl") }
  })

/**
 * The protocol steps of one client, over the `HttpClient` in context.
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const resolved = yield* resolveProtocol(options)
    return Protocol.make(resolved, TokenEndpoint.make(resolved, yield* HttpClient.HttpClient))
  })

/**
 * The protocol service as a layer.
 *
 * @since 2.0.0
 * @category constructors
 */
export const layer = (options: Options = {}): Layer.Layer<OAuthClient, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effect(OAuthClient, make(options))

/**
 * The code from the URL the authorization server redirected to (a full URL or a bare query). Rules, in order: a
 * repeated parameter, `expectedState` missing or different, `iss` of another issuer (or, with `requireIss`, none),
 * an `error` parameter, no code.
 *
 * @since 2.0.0
 * @category parsing
 */
export const parseResponseUrl = Protocol.parseResponseUrl
