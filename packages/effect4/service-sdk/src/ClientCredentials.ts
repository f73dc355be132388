/**
 * App-only tokens (RFC 6749 §4.4): fetched, cached and renewed before expiry, one request for many callers.
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { ProtocolOptions } from "./internal/config.js"
import * as Provider from "./internal/provider.js"
import * as SingleFlight from "./internal/singleFlight.js"
import type { ConfigurationError } from "./ServiceError.js"
import * as TokenProvider from "./TokenProvider.js"

/**
 * The protocol's options (`OAuthClient.Options`) with ownership: `tokenCache` (default memory) and `skew` (30 s).
 *
 * @since 2.0.0
 * @category options
 */
export type Options = Omit<ProtocolOptions, "redirectUri" | "publicClient" | "issuer" | "requireIss"> &
  Provider.OwnershipOptions

/**
 * The provider and what its owner reads synchronously (the Promise facade's fast path).
 *
 * @internal
 */
export const makeOwned = (options: Options = {}) =>
  Effect.gen(function* () {
    const resolved = yield* Provider.resolve(options)
    const { oauth, protocol } = resolved
    const flight = yield* SingleFlight.make({
      name: "ClientCredentials",
      cache: resolved.cache,
      skewMillis: resolved.skewMillis,
      refreshAheadMillis: resolved.refreshAheadMillis,
      renew: () => Effect.map(oauth.clientCredentials(), (token) => Provider.bind(protocol, token)),
      accepts: Provider.accepts(protocol),
      whenCacheDown: "local",
      entryGone: "keep"
    })
    const service = TokenProvider.TokenProvider.of({
      getAccessToken: flight.getAccessToken,
      forceRefresh: flight.forceRefresh
    })
    return { service, peek: flight.peek }
  })

/**
 * A provider of app tokens, over the `HttpClient` in context. When a shared cache cannot be reached it renews in
 * this process alone (a warning is logged; sharing resumes when the cache answers).
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<TokenProvider.Service, ConfigurationError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.map(makeOwned(options), ({ service }) => service)

/**
 * The client-credentials provider as a service (it is also the `TokenProvider` its layer provides).
 *
 * @since 2.0.0
 * @category tags
 */
export class ClientCredentials extends Context.Service<ClientCredentials, TokenProvider.Service>()(
  "service-sdk/ClientCredentials"
) {
  /**
   * {@link make}
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { FetchHttpClient } from "effect/http"
   * import { ClientCredentials } from "@service-sdk/effect"
   *
   * const token = Effect.gen(function* () {
   *   const provider = yield* ClientCredentials.make({ clientId: "my-app", clientSecret: process.env.MY_APP_SECRET })
   *   return yield* provider.getAccessToken // Redacted<string>
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
   * import { Layer } from "effect"
   * import { FetchHttpClient } from "effect/http"
   * import { ClientCredentials, ServiceClient } from "@service-sdk/effect"
   *
   * const AppClient = ServiceClient.layer().pipe(
   *   Layer.provide(ClientCredentials.layer({ scope: ["catalog-read"], refreshAhead: "1 minute" })),
   *   Layer.provide(FetchHttpClient.layer)
   * )
   * ```
   */
  static layer(options?: Options) {
    return layer(options)
  }
}

/**
 * {@link make} as a layer of both `ClientCredentials` and `TokenProvider` (for `ServiceClient.layer()`).
 *
 * @since 2.0.0
 * @category constructors
 */
export const layer = (
  options: Options = {}
): Layer.Layer<ClientCredentials | TokenProvider.TokenProvider, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.map(make(options), (service) =>
      Context.make(ClientCredentials, service).pipe(Context.add(TokenProvider.TokenProvider, service))
    )
  )

/**
 * The types that go with {@link ClientCredentials}.
 *
 * @since 2.0.0
 */
export declare namespace ClientCredentials {
  export type Service = TokenProvider.Service
  export type Options = import("./ClientCredentials.js").Options
}
