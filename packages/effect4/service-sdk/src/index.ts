/**
 * service-sdk for Effect 4: call the Service's web API without handling OAuth tokens by hand.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { ServiceClient } from "service-sdk"
 *
 * const program = Effect.gen(function* () {
 *   const client = yield* ServiceClient
 *   return yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
 * })
 *
 * program.pipe(
 *   Effect.provide(ServiceClient.layerClientCredentials().pipe(Layer.provide(FetchHttpClient.layer))),
 *   Effect.runPromise
 * )
 * ```
 *
 * @since 2.0.0
 */
export { AuthorizationCode } from "./AuthorizationCode.js"
export { type AuthorizeLocalOptions, authorizeLocal } from "./authorizeLocal.js"
export * as ClientCredentials from "./ClientCredentials.js"
export * as OAuthClient from "./OAuthClient.js"
export * as Pkce from "./Pkce.js"
export { ServiceClient } from "./ServiceClient.js"
export {
  ApiError,
  AuthenticationError,
  ConfigurationError,
  type ErrorPayload,
  isServiceError,
  RateLimitError,
  ServiceError,
  TokenCacheError,
  TransportError
} from "./ServiceError.js"
export * as TokenCache from "./TokenCache.js"
export * as TokenStore from "./TokenStore.js"
export { TokenInfo, TokenInfoJson } from "./TokenInfo.js"
export { TokenProvider } from "./TokenProvider.js"
export { UserTokens } from "./UserTokens.js"
