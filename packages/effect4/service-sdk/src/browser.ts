/**
 * service-sdk for Effect 4 in a browser page (the `browser` export condition of `@service-sdk/effect`): the same
 * public names as the Node entry but `authorizeLocal` (a loopback HTTP server) and `TokenStore` (files per user),
 * which a page cannot have. Use `FetchHttpClient.layer` as the transport, `TokenCache.browser` to share tokens
 * between the tabs of an origin and `BrowserSignIn` to sign in by redirect (docs/browser.md).
 *
 * @since 2.0.0
 * @module service-sdk (Effect 4 line, 2.x, browser)
 */
export { AuthorizationCode } from "./AuthorizationCode.js"
/**
 * Sign-in by redirect in a browser page (a public client with PKCE): `start` before the redirect, `complete` after.
 *
 * @since 2.0.0
 */
export * as BrowserSignIn from "./BrowserSignIn.js"
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
export { TokenInfo, type TokenInfoJson, TokenInfoJsonSchema } from "./TokenInfo.js"
export { TokenProvider, type Service as TokenProviderService } from "./TokenProvider.js"
export { UserTokens, type Service as UserTokensService } from "./UserTokens.js"
/**
 * Server-supplied text made safe to show (escape sequences, control, bidi and invisible characters removed, capped),
 * and a token shortened to tell two apart without being usable.
 *
 * @since 2.0.0
 */
export { cleanUntrustedText } from "./ServiceError.js"
export { maskToken } from "./TokenInfo.js"
