/**
 * The OAuth protocol, stateless: one Effect per protocol step, each returning a `TokenInfo`, nothing cached and
 * nothing owned. For programs that keep tokens themselves (a web app with `UserTokens`, a CLI with its token file);
 * `AuthorizationCode` and `ClientCredentials` are token ownership (cache, single flight, renewal) built on it.
 *
 * @since 0.3.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import { resolveProtocol } from "./internal/config.js"
import * as Protocol from "./internal/oauthClient.js"
import * as TokenEndpoint from "./internal/tokenEndpoint.js"
import { type AuthenticationError, ConfigurationError, type TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * `clientId`/`clientSecret` fall back to `SERVICE_SDK_CLIENT_ID`/`SERVICE_SDK_CLIENT_SECRET` (no secret for a public
 * client), `authUrl` to `SERVICE_SDK_AUTH_URL` and then `https://accounts.service.example`, `redirectUri` to
 * `SERVICE_SDK_REDIRECT_URI`. Empty strings count as absent.
 *
 * @since 0.3.0
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
 * @since 0.3.0
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
 * @since 0.3.0
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
  /** The user to preselect on the consent page (`login_hint`). */
  readonly loginHint?: string | undefined
}

/**
 * A sign-in in progress: send the user to `url`, keep `state` and `codeVerifier` server-side until the callback, then
 * pass them to `completeAuthorization`. Single-use: a second completion of the same one fails.
 *
 * @since 0.3.0
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
 * The protocol steps. Every token comes back as a `TokenInfo` (expiry from the Effect `Clock`); none is kept.
 *
 * @since 0.3.0
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
   * `error` parameter or a missing code fails, then the code is exchanged with the pending verifier. Single-use.
   */
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: {
      readonly state: string
      readonly codeVerifier: string | Redacted.Redacted<string>
      readonly redirectUri?: string | undefined
    }
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError>
  /** The authorization code grant (RFC 6749 §4.1.3); a public client must pass the PKCE `codeVerifier`. */
  readonly exchangeCode: (
    code: string,
    options?: { readonly codeVerifier?: string | Redacted.Redacted<string> | undefined }
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
 * The OAuth protocol steps as a service.
 *
 * @since 0.3.0
 */
export class OAuthClient extends Context.Tag("service-sdk/OAuthClient")<OAuthClient, Service>() {}

/**
 * An `OAuthClient` on the `HttpClient` in context. Fails with `ConfigurationError` for a missing client id (or
 * secret, for a confidential client) or a bad option.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { OAuthClient } from "service-sdk"
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
 * @since 0.3.0
 */
export const make = (options: Options = {}): Effect.Effect<Service, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    if (typeof options !== "object" || options === null) {
      return yield* new ConfigurationError({ message: "OAuthClient options must be an object" })
    }
    const resolved = yield* resolveProtocol(options)
    const endpoint = TokenEndpoint.make(resolved, yield* HttpClient.HttpClient)
    return Protocol.make({ ...resolved, publicClient: resolved.clientSecret === undefined }, endpoint)
  })

/**
 * {@link make} as a `Layer` of {@link OAuthClient}.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { OAuthClient } from "service-sdk"
 *
 * const OAuthLive = OAuthClient.layer({ scope: "catalog-read" }).pipe(Layer.provide(NodeHttpClient.layerUndici))
 * const appToken = Effect.flatMap(OAuthClient.OAuthClient, (oauth) => oauth.clientCredentials()).pipe(
 *   Effect.provide(OAuthLive)
 * )
 * ```
 *
 * @since 0.3.0
 */
export const layer = (options: Options = {}): Layer.Layer<OAuthClient, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effect(OAuthClient, make(options))
