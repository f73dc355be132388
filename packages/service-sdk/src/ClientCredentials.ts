/**
 * The client credentials grant (RFC 6749 §4.4): app-only tokens, no refresh token, renewed by asking again.
 *
 * @since 1.0.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Protocol from "./internal/oauthClient.js"
import * as Provider from "./internal/provider.js"
import type { ConfigurationError } from "./ServiceError.js"
import { TokenProvider, type TokenProviderService } from "./TokenProvider.js"

/**
 * `clientId`/`clientSecret` fall back to `SERVICE_SDK_CLIENT_ID`/`SERVICE_SDK_CLIENT_SECRET`, `authUrl` to
 * `SERVICE_SDK_AUTH_URL` and then `https://accounts.service.example`.
 *
 * @since 1.0.0
 */
export interface Options extends Provider.ProviderOptions {}

/**
 * A client-credentials `TokenProvider` service: it fetches an app token on first use, serves it from `tokenCache`
 * (in memory by default) until `skew` before it expires, and renews it with one request however many callers wait.
 * Fails with `ConfigurationError` when the client id or secret is missing from both the options and the environment.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { ClientCredentials } from "service-sdk"
 *
 * const token = Effect.gen(function* () {
 *   const provider = yield* ClientCredentials.make({ clientId: "my-app", clientSecret: process.env.MY_APP_SECRET })
 *   return yield* provider.getAccessToken // Redacted<string>
 * }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
 * ```
 *
 * @since 1.0.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<TokenProviderService, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    // a client credentials grant always authenticates with a secret, whatever plain JS passes
    const resolved = yield* Provider.resolve({ ...options, publicClient: false })
    const oauth = Protocol.make({ ...resolved, redirectUri: undefined }, resolved.endpoint)
    const { service } = yield* Provider.makeService(
      "ClientCredentials",
      resolved,
      () => oauth.clientCredentials(),
      // a lost cache must not stop an app-only client: it renews on its own until the cache answers again
      "local"
    )
    return service
  })

/**
 * {@link make} as a `Layer` of `TokenProvider`, for `ServiceClient.layer()` or your own code; background renewals
 * (`refreshAhead`) stop with the layer.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { ClientCredentials, ServiceClient } from "service-sdk"
 *
 * const AppClient = ServiceClient.layer().pipe(
 *   Layer.provide(ClientCredentials.layer({ scope: ["catalog-read"], refreshAhead: "1 minute" })),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 1.0.0
 */
export const layer = (options: Options = {}): Layer.Layer<TokenProvider, ConfigurationError, HttpClient.HttpClient> =>
  // scoped: background renewals (`refreshAhead`) end with the layer
  Layer.scoped(TokenProvider, make(options))
