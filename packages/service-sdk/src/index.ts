/**
 * service-sdk: call the Service's web API without handling OAuth tokens by hand.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export { AuthorizationCode } from "./AuthorizationCode.js"
/** @since 0.1.0 */
export { type AuthorizeLocalOptions, authorizeLocal } from "./authorizeLocal.js"
/** @since 0.1.0 */
export * as ClientCredentials from "./ClientCredentials.js"
/** @since 0.2.0 */
export * as Pkce from "./Pkce.js"
/** @since 0.1.0 */
export {
  ServiceClient,
  type ServiceClientError,
  type ServiceClientHttpError,
  type ServiceClientOptions,
  type ServiceClientService
} from "./ServiceClient.js"
/** @since 0.1.0 */
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
/** @since 0.1.0 */
export * as TokenCache from "./TokenCache.js"
/** @since 0.2.0 */
export * as TokenStore from "./TokenStore.js"
/** @since 0.1.0 */
export { TokenInfo, type TokenInfoJson } from "./TokenInfo.js"
/** @since 0.1.0 */
export { TokenProvider, type TokenProviderService } from "./TokenProvider.js"
/** @since 0.2.0 */
export { UserTokens, type UserTokensService } from "./UserTokens.js"
/** @since 0.1.0 */
export { maskToken } from "./internal/redact.js"
