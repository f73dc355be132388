/**
 * `@service-sdk/redis`: a Redis token cache for service-sdk, with a lock across processes so that a whole fleet
 * makes one token request per expiry.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as RedisTokenCache from "./RedisTokenCache.js"
/** @since 0.2.0 */
export * as RedisTokenStore from "./RedisTokenStore.js"
