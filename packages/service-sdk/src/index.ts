/**
 * service-sdk: call the Service's web API without handling OAuth tokens by hand.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export { AuthorizationCode } from "./AuthorizationCode.js"
/** @since 0.1.0 */
export { type AuthorizeLocalOptions, authorizeLocal } from "./authorizeLocal.js"
/**
 * App-only tokens: the client credentials grant, as a `TokenProvider`.
 *
 * @since 0.1.0
 */
export * as ClientCredentials from "./ClientCredentials.js"
/**
 * The OAuth protocol, stateless: one Effect per protocol step (authorization URL, sign-in, code exchange, refresh,
 * client credentials), each returning a `TokenInfo`, nothing cached.
 *
 * @since 0.3.0
 */
export * as OAuthClient from "./OAuthClient.js"
/**
 * PKCE (RFC 7636): a one-time verifier and its S256 challenge for sign-in flows of your own.
 *
 * @since 0.2.0
 */
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
/**
 * Where a provider keeps its token: in memory (the default) or a file; `@service-sdk/redis` adds Redis.
 *
 * @since 0.1.0
 */
export * as TokenCache from "./TokenCache.js"
/**
 * A token cache per user (in memory, or one file per user in a directory), for `UserTokens`.
 *
 * @since 0.2.0
 */
export * as TokenStore from "./TokenStore.js"
/** @since 0.1.0 */
export { TokenInfo, type TokenInfoJson } from "./TokenInfo.js"
/** @since 0.1.0 */
export { TokenProvider, type TokenProviderService } from "./TokenProvider.js"
/** @since 0.2.0 */
export { UserTokens, type UserTokensService } from "./UserTokens.js"
/** @since 0.1.0 */
export { maskToken } from "./internal/redact.js"
/** @since 0.4.0 */
export { cleanUntrustedText } from "./internal/redact.js"
