/**
 * A `TokenCache` in Redis for fleets of processes: every process shares one token, and `withLock` is a lock across
 * processes, so that the whole fleet makes one token request per expiry instead of one per process. The key, the
 * stored JSON and the Lua scripts are the Effect 3 line's (`@service-sdk/redis` 1.x): processes of both lines can
 * share one Redis.
 *
 * ```ts
 * const program = Effect.gen(function* () {
 *   const tokenCache = yield* RedisTokenCache.make({ url: "redis://127.0.0.1:6379", key: "service-sdk:token:my-app" })
 *   const provider = yield* ClientCredentials.make({ tokenCache })
 *   return yield* provider.getAccessToken
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError, type TokenCache, type TokenCacheError } from "@service-sdk/effect"
import * as Cache from "./internal/cache.js"
import * as Shared from "./internal/options.js"
import * as Protocol from "@service-sdk/shared/redisProtocol"

/**
 * Options of {@link make}: where Redis is (`url` or your own `client`), the entry's `key`, and the lock's timings.
 *
 * @since 2.0.0
 */
export interface Options {
  /** A client of yours, used as is and never closed by the cache. Give this or `url`, not both. */
  readonly client?: Redis | Cluster | undefined
  /**
   * `redis://[:password@]host:port[/db]` or `rediss://…` (default `redis://127.0.0.1:6379`): a connection of the
   * cache's own, opened by `make` (which fails when Redis cannot be reached) and closed with its scope.
   */
  readonly url?: string | undefined
  /** The key of the shared token, e.g. `service-sdk:token:<clientId>`; the lock is `<key>:lock`. */
  readonly key: string
  /**
   * How long a lock nobody extends lives (its holder crashed, or its release was lost in a failover), default 10 s.
   * A live holder extends it every third of this (at least once a second).
   */
  readonly lockTtl?: Duration.Input | undefined
  /** How long `withLock` waits for another process's lock before failing with TokenCacheError, default 2 minutes. */
  readonly lockWait?: Duration.Input | undefined
  /** The pause between two tries for the lock, jittered to 50–150 %, default 50 ms. */
  readonly pollInterval?: Duration.Input | undefined
  /**
   * The longest wait for one Redis command (and for the connection to be ready), default 5 s. While Redis is away
   * (a failover, a reconnection) a command is tried again until then.
   */
  readonly commandTimeout?: Duration.Input | undefined
}

/**
 * The defaults of {@link Options}.
 *
 * @since 2.0.0
 */
export const defaults = Shared.defaults

/**
 * The key of the lock that guards the token under `key`.
 *
 * @since 2.0.0
 */
export const lockKey: (key: string) => string = Protocol.lockKey

/**
 * A Redis token cache as a service, for programs that build their providers from the context.
 *
 * @since 2.0.0
 */
export class RedisTokenCache extends Context.Service<RedisTokenCache, TokenCache.TokenCache>()(
  "service-sdk/RedisTokenCache"
) {}

/**
 * Connects (when given a `url`) and returns the cache. Every Redis failure is a TokenCacheError that names the
 * operation and the address (never a password or a token); invalid options are a ConfigurationError.
 *
 * @example
 * ```ts
 * import { RedisTokenCache } from "@service-sdk/redis"
 * import { Effect } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { ClientCredentials } from "@service-sdk/effect"
 *
 * const token = Effect.gen(function* () {
 *   const tokenCache = yield* RedisTokenCache.make({ url: "redis://127.0.0.1:6379", key: "service-sdk:token:my-app" })
 *   const provider = yield* ClientCredentials.make({ tokenCache })
 *   return yield* provider.getAccessToken
 * }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 2.0.0
 */
export const make = (
  options: Options
): Effect.Effect<TokenCache.TokenCache, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const checked = yield* Shared.object<Options>(
      "RedisTokenCache",
      options,
      `{ url: "redis://127.0.0.1:6379", key: "service-sdk:token:my-app" }`
    )
    const { key } = checked
    if (typeof key !== "string" || key.trim() === "") {
      return yield* new ConfigurationError({
        message: "RedisTokenCache needs a key, e.g. service-sdk:token:<clientId>"
      })
    }
    const { connection, lock } = yield* Shared.resolve("RedisTokenCache", checked)
    return Cache.make(connection, key, { ...lock, lockKey: lockKey(key) })
  })

/**
 * {@link make} as a layer; the connection it opens closes with the layer.
 *
 * ```ts
 * const Provider = Layer.unwrap(
 *   Effect.gen(function* () {
 *     const tokenCache = yield* RedisTokenCache.RedisTokenCache
 *     return ClientCredentials.layer({ tokenCache })
 *   })
 * ).pipe(Layer.provide(RedisTokenCache.layer({ key: "service-sdk:token:my-app" })))
 * ```
 *
 * @since 2.0.0
 */
export const layer = (options: Options): Layer.Layer<RedisTokenCache, TokenCacheError | ConfigurationError> =>
  Layer.effect(RedisTokenCache, make(options))

/**
 * A cache from {@link connect}: a `TokenCache` that owns its connection until `close()`.
 *
 * @since 2.0.0
 */
export interface ConnectedRedisTokenCache extends TokenCache.TokenCache {
  /** Closes the connection the cache opened (not a `client` passed in). Idempotent. */
  readonly close: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * {@link make} for plain code: resolves to the cache, or rejects with the SDK's TokenCacheError or
 * ConfigurationError.
 *
 * ```ts
 * await using tokenCache = await RedisTokenCache.connect({ url: process.env.REDIS_URL, key: "service-sdk:token:my-app" })
 * ```
 *
 * @since 2.0.0
 */
export const connect = async (options: Options): Promise<ConnectedRedisTokenCache> => {
  const { value, close } = await Shared.startScoped(make(options))
  return { ...value, close, [Symbol.asyncDispose]: close }
}
