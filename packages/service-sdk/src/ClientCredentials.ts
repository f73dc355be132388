/**
 * The client credentials grant (RFC 6749 §4.4): app-only tokens, no refresh token, renewed by asking again.
 *
 * @since 1.0.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Provider from "./internal/provider.js"
import type * as OAuthClient from "./OAuthClient.js"
import type { ConfigurationError } from "./ServiceError.js"
import type { TokenCache } from "./TokenCache.js"
import type { TokenProvider, TokenProviderService } from "./TokenProvider.js"

/**
 * The protocol's options (`clientId`/`clientSecret` fall back to `SERVICE_SDK_CLIENT_ID`/`SERVICE_SDK_CLIENT_SECRET`,
 * `authUrl` to `SERVICE_SDK_AUTH_URL` and then `https://accounts.service.example`), and token ownership's: where the
 * token is kept and when it is renewed. The options of every provider extend these.
 *
 * @since 1.0.0
 * @category options
 */
export interface Options
  extends Omit<OAuthClient.Options, "publicClient" | "redirectUri" | "issuer" | "requireIss" | "refreshTokenLifetime"> {
  /** Where the token is kept (default: in memory, this process only). */
  readonly tokenCache?: TokenCache | undefined
  /** A token is renewed this long before it expires (default 30 s). */
  readonly skew?: Duration.DurationInput | undefined
  /**
   * Off by default. Within this long of going stale, the first caller starts a background renewal (single flight, in
   * the provider's scope) and is served the still-valid token, so at steady load nobody waits at an expiry; a failed
   * background renewal is logged and the normal path takes over at staleness.
   */
  readonly refreshAhead?: Duration.DurationInput | undefined
}

/**
 * The provider and what its owner reads synchronously (the Promise facade's fast path).
 *
 * @internal
 */
export const makeOwned = (options: Options = {}) =>
  Effect.gen(function* () {
    // a client credentials grant always authenticates with a secret, whatever plain JS passes
    const resolved = yield* Provider.resolve({ ...options, publicClient: false }, { redirectUri: false })
    const { peek, service } = yield* Provider.makeService(
      "ClientCredentials",
      resolved,
      () => resolved.oauth.clientCredentials(),
      // a lost cache must not stop an app-only client: it renews on its own until the cache answers again
      "local"
    )
    return { service, peek }
  })

/**
 * A client-credentials `TokenProvider` service: it fetches an app token on first use, serves it from `tokenCache`
 * (in memory by default) until `skew` before it expires, and renews it with one request however many callers wait.
 * Background renewals (`refreshAhead`) and retried cache writes run in the `Scope`. Fails with `ConfigurationError`
 * when the client id or secret is missing from both the options and the environment, or an option is bad.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<TokenProviderService, ConfigurationError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.map(makeOwned(options), ({ service }) => service)

/**
 * App-only tokens (the client credentials grant) as a `TokenProvider`.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { ClientCredentials } from "@service-sdk/effect"
 *
 * const token = Effect.gen(function* () {
 *   const provider = yield* ClientCredentials.make({ clientId: "my-app", clientSecret: process.env.MY_APP_SECRET })
 *   return yield* provider.getAccessToken // Redacted<string>
 * }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
 * ```
 *
 * @since 1.0.0
 * @category tags
 */
export class ClientCredentials extends Context.Tag("service-sdk/ClientCredentials")<
  ClientCredentials,
  TokenProviderService
>() {
  /**
   * {@link make}: the provider in the current `Scope`.
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Effect } from "effect"
   * import { ClientCredentials } from "@service-sdk/effect"
   *
   * const token = Effect.gen(function* () {
   *   const provider = yield* ClientCredentials.make({ scope: "catalog-read" })
   *   return yield* provider.getAccessToken
   * }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
   * ```
   *
   * @since 1.0.0
   */
  static readonly make = make
  /**
   * {@link make} as a `Layer` of both `ClientCredentials` and `TokenProvider` (for `ServiceClient.layer()` or your own
   * code); background renewals (`refreshAhead`) stop with the layer.
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Layer } from "effect"
   * import { ClientCredentials, ServiceClient } from "@service-sdk/effect"
   *
   * const AppClient = ServiceClient.layer().pipe(
   *   Layer.provide(ClientCredentials.layer({ scope: ["catalog-read"], refreshAhead: "1 minute" })),
   *   Layer.provide(NodeHttpClient.layerUndici)
   * )
   * ```
   *
   * @since 1.0.0
   */
  static layer(
    options: Options = {}
  ): Layer.Layer<ClientCredentials | TokenProvider, ConfigurationError, HttpClient.HttpClient> {
    return Provider.layer(ClientCredentials, make(options))
  }
}

/**
 * The types of `ClientCredentials`: the service it provides and its options.
 *
 * @since 1.0.0
 */
export declare namespace ClientCredentials {
  /** @since 1.0.0 */
  export type Service = TokenProviderService
  /** @since 1.0.0 */
  export type Options = ClientCredentialsOptions
}

type ClientCredentialsOptions = Options
