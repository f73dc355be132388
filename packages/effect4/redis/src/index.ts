/**
 * `@service-sdk/redis` for the Effect 4 line: Redis token caches shared by a fleet of processes (of either line).
 *
 * @since 2.0.0
 */
export * as RedisTokenCache from "./RedisTokenCache.js"
export * as RedisTokenStore from "./RedisTokenStore.js"
