/**
 * service-sdk for plain code: the same providers and client as Promise classes.
 *
 * ```ts
 * await using auth = new AsyncClientCredentials({ clientId, clientSecret })
 * const token = await auth.getAccessToken()
 * ```
 *
 * @since 1.0.0
 * @module @service-sdk/effect/promise
 */

/** @since 1.0.0 */
export { type AsyncAuthorizeLocalOptions, asyncAuthorizeLocal } from "./internal/promise/asyncAuthorizeLocal.js"
/** @since 1.0.0 */
export {
  AsyncAuthorizationCode,
  AsyncClientCredentials,
  type AsyncOptions,
  AsyncTokenProvider
} from "./internal/promise/asyncProviders.js"
/** @since 1.0.0 */
export {
  type AsyncClientCredentialsClientOptions,
  AsyncServiceClient,
  type AsyncServiceClientOptions
} from "./internal/promise/asyncServiceClient.js"
/** @since 1.0.0 */
export {
  AsyncUserTokenProvider,
  AsyncUserTokens,
  type AsyncUserTokensOptions,
  type PromiseUserTokenCache
} from "./internal/promise/asyncUserTokens.js"
/** @since 1.0.0 */
export type { FacadeLogger, LogLevelName } from "./internal/promise/logging.js"
/** @since 1.0.0 */
export {
  type DirectoryTokenStore,
  directoryTokenStore,
  type FileTokenCache,
  fileTokenCache,
  tokenInfoFromJson,
  tokenInfoToJson
} from "./internal/promise/plainCaches.js"
/** @since 1.0.0 */
export type { FacadeOptions, PromiseTokenCache } from "./internal/promise/runtime.js"
/** @since 1.0.0 */
export {
  ApiError,
  AuthenticationError,
  ConfigurationError,
  RateLimitError,
  ServiceError,
  TokenCacheError,
  TransportError
} from "./ServiceError.js"
/** @since 1.0.0 */
export * as TokenCache from "./TokenCache.js"
/** @since 1.0.0 */
export { TokenInfo, type TokenInfoJson } from "./TokenInfo.js"
/** @since 1.0.0 */
export * as TokenStore from "./TokenStore.js"
