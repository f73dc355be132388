/**
 * `@service-sdk/redis`: a Redis token cache for service-sdk, with a lock across processes so that a whole fleet
 * makes one token request per expiry.
 *
 * @since 1.0.0
 * @module @service-sdk/redis
 */

/**
 * A `TokenCache` in Redis shared by a fleet of processes, with a cross-process lock for single-flight renewal.
 *
 * @since 1.0.0
 */
export * as RedisTokenCache from "./RedisTokenCache.js"
/**
 * A `TokenStore` in Redis: one shared, locked cache entry per user, for web apps running several processes.
 *
 * @since 1.0.0
 */
export * as RedisTokenStore from "./RedisTokenStore.js"
