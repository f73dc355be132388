/**
 * A Redis token cache for a fleet of processes: one entry, a cross-process lock (`SET NX PX` + heartbeat) and a
 * compare-and-set write (one Lua script), so the fleet makes one token request per expiry. The key, lock and entry
 * format are those of the Effect 3 line's `@service-sdk/redis`: processes of both lines may share one Redis.
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { ConfigurationError, type TokenCache, type TokenCacheError } from "service-sdk"
import * as Cache from "./internal/cache.js"
import * as Shared from "./internal/options.js"
import { lockKey as lockKeyOf } from "./internal/shared/redisProtocol.js"

/**
 * The options: a connection (`client` or `url`), the entry's `key`, and the lock's timing.
 *
 * @since 2.0.0
 */
export interface Options extends Shared.SharedOptions {
  /** The entry's key, e.g. `service-sdk:token:<clientId>`; its lock is `<key>:lock`. */
  readonly key: string
}

/**
 * The defaults of the options.
 *
 * @since 2.0.0
 */
export const defaults = Shared.defaults

/**
 * The lock key of an entry key.
 *
 * @since 2.0.0
 */
export const lockKey = lockKeyOf

/**
 * The cache as a service.
 *
 * @since 2.0.0
 */
export class RedisTokenCache extends Context.Service<RedisTokenCache, TokenCache.TokenCache>()(
  "service-sdk/RedisTokenCache"
) {}

/**
 * The cache; a connection it opened is closed with the scope.
 *
 * @since 2.0.0
 */
export const make = (
  options: Options
): Effect.Effect<TokenCache.TokenCache, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    if (typeof options !== "object" || options === null) {
      return yield* new ConfigurationError({ message: "RedisTokenCache options must be an object" })
    }
    if (typeof options.key !== "string" || options.key.trim() === "") {
      return yield* new ConfigurationError({
        message: "RedisTokenCache needs a key, e.g. service-sdk:token:<clientId>"
      })
    }
    const { connection, lock } = yield* Shared.resolve("RedisTokenCache", options)
    return Cache.make(connection, options.key, { ...lock, lockKey: lockKeyOf(options.key) })
  })

/**
 * {@link make} as a layer.
 *
 * @since 2.0.0
 */
export const layer = (options: Options): Layer.Layer<RedisTokenCache, TokenCacheError | ConfigurationError> =>
  Layer.effect(RedisTokenCache, make(options))
