/**
 * service-sdk: call the Service's web API without handling OAuth tokens by hand.
 *
 * @since 1.0.0
 * @module @service-sdk/effect
 */

/** @since 1.0.0 */
export { AuthorizationCode } from "./AuthorizationCode.js"
/** @since 1.0.0 */
export { type AuthorizeLocalOptions, authorizeLocal } from "./authorizeLocal.js"
/**
 * App-only tokens: the client credentials grant, as a `TokenProvider`.
 *
 * @since 1.0.0
 */
export { ClientCredentials } from "./ClientCredentials.js"
/**
 * The OAuth protocol, stateless: one Effect per protocol step (authorization URL, sign-in, code exchange, refresh,
 * client credentials), each returning a `TokenInfo`, nothing cached.
 *
 * @since 1.0.0
 */
export { OAuthClient } from "./OAuthClient.js"
/**
 * PKCE (RFC 7636): a one-time verifier and its S256 challenge for sign-in flows of your own.
 *
 * @since 1.0.0
 */
export * as Pkce from "./Pkce.js"
/** @since 1.0.0 */
export {
  ServiceClient,
  type ServiceClientError,
  type ServiceClientHttpError,
  type ServiceClientOptions,
  type ServiceClientService
} from "./ServiceClient.js"
/** @since 1.0.0 */
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
 * @since 1.0.0
 */
export * as TokenCache from "./TokenCache.js"
/**
 * A token cache per user (in memory, or one file per user in a directory), for `UserTokens`.
 *
 * @since 1.0.0
 */
export * as TokenStore from "./TokenStore.js"
/** @since 1.0.0 */
export { maskToken, TokenInfo, type TokenInfoJson } from "./TokenInfo.js"
/** @since 1.0.0 */
export { TokenProvider, type TokenProviderService } from "./TokenProvider.js"
/** @since 1.0.0 */
export { UserTokens, type UserTokensService } from "./UserTokens.js"
/** @since 1.0.0 */
export { cleanUntrustedText } from "./ServiceError.js"
