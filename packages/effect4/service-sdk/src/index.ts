/**
 * service-sdk for Effect 4: call the Service's web API without handling OAuth tokens by hand.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { ServiceClient } from "@service-sdk/effect"
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
 * @module service-sdk (Effect 4 line, 2.x)
 */
export { AuthorizationCode } from "./AuthorizationCode.js"
export { type AuthorizeLocalOptions, authorizeLocal } from "./authorizeLocal.js"
export { ClientCredentials } from "./ClientCredentials.js"
export { OAuthClient } from "./OAuthClient.js"
/**
 * PKCE (RFC 7636): a one-time verifier and its S256 challenge for sign-in flows of your own.
 *
 * @since 2.0.0
 */
export * as Pkce from "./Pkce.js"
export {
  type Error as ServiceClientError,
  type HttpError as ServiceClientHttpError,
  type Options as ServiceClientOptions,
  ServiceClient,
  type Service as ServiceClientService
} from "./ServiceClient.js"
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
/**
 * Where a provider keeps its token: in memory (the default) or a file; `@service-sdk/redis` adds Redis.
 *
 * @since 2.0.0
 */
export * as TokenCache from "./TokenCache.js"
/**
 * A token cache per user (in memory, or one file per user in a directory), for `UserTokens`.
 *
 * @since 2.0.0
 */
export * as TokenStore from "./TokenStore.js"
export { TokenInfo, type TokenInfoJson, TokenInfoJsonSchema } from "./TokenInfo.js"
export { TokenProvider, type Service as TokenProviderService } from "./TokenProvider.js"
export { UserTokens, type Service as UserTokensService } from "./UserTokens.js"
/**
 * Server-supplied text made safe to show (escape sequences, control, bidi and invisible characters removed, capped),
 * and a token shortened to tell two apart without being usable.
 *
 * @since 2.0.0
 */
export { cleanUntrustedText, maskToken } from "@service-sdk/shared/redact"
