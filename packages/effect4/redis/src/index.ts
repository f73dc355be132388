/**
 * `@service-sdk/redis` for Effect 4: a Redis token cache for service-sdk, with a lock across processes so that a
 * whole fleet makes one token request per expiry. Same keys, stored JSON and Lua scripts as the Effect 3 line
 * (1.x), so a fleet may mix processes of both lines on one Redis.
 *
 * @since 2.0.0
 * @module @service-sdk/redis (Effect 4 line, 2.x)
 */

/**
 * A `TokenCache` in Redis shared by a fleet of processes, with a cross-process lock for single-flight renewal.
 *
 * @since 2.0.0
 */
export * as RedisTokenCache from "./RedisTokenCache.js"
/**
 * A `TokenStore` in Redis: one shared, locked cache entry per user, for web apps running several processes.
 *
 * @since 2.0.0
 */
export * as RedisTokenStore from "./RedisTokenStore.js"
