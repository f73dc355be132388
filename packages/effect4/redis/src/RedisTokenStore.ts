/**
 * A `TokenStore` in Redis for web apps that sign in many users and run as several processes: each user's tokens
 * under their own key (`prefix` + the encoded user id), all users over one connection, and each user's key with its
 * own lock, so that the fleet makes one token request per user per expiry. The keys are the Effect 3 line's.
 *
 * @since 2.0.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ConfigurationError, type TokenCache, type TokenCacheError, type TokenStore } from "@service-sdk/effect"
import * as Cache from "./internal/cache.js"
import * as Shared from "./internal/options.js"
import * as Protocol from "@service-sdk/shared/redisProtocol"
import type * as RedisTokenCache from "./RedisTokenCache.js"
import { lockKey } from "./RedisTokenCache.js"

/**
 * The options of `RedisTokenCache` with a key `prefix` instead of one `key`.
 *
 * @since 2.0.0
 */
export interface Options extends Omit<RedisTokenCache.Options, "key"> {
  /** Put before every encoded user id, e.g. `my-app:tokens:`; each user's lock is `<key>:lock`. */
  readonly prefix: string
}

/**
 * A user id as a key part: `A-Z a-z 0-9 _ . @ -` as is, every other UTF-16 code unit as `%` and four hex digits.
 * Injective (`%` itself is encoded) and free of `:`, so no id reaches another user's key or a lock key.
 *
 * @since 2.0.0
 */
export const encodeUserId: (userId: string) => string = Protocol.encodeUserId

/**
 * The Redis key of a user's tokens under `prefix`.
 *
 * @since 2.0.0
 */
export const userKey: (prefix: string, userId: string) => string = Protocol.userKey

/**
 * Connects (when given a `url`; a `client` is used as is and never closed) and returns the store: one
 * `RedisTokenCache` per user over the one connection, with `clear` for sign-out.
 *
 * ```ts
 * const store = yield* RedisTokenStore.make({ url: "redis://127.0.0.1:6379", prefix: "my-app:tokens:" })
 * const users = yield* UserTokens.make({ store })
 * ```
 *
 * @since 2.0.0
 */
export const make = (
  options: Options
): Effect.Effect<TokenStore.TokenStore, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const checked = yield* Shared.object<Options>(
      "RedisTokenStore",
      options,
      `{ url: "redis://127.0.0.1:6379", prefix: "my-app:tokens:" }`
    )
    const prefix = checked.prefix
    if (typeof prefix !== "string" || prefix === "") {
      return yield* new ConfigurationError({
        message: "RedisTokenStore needs a prefix for its keys, e.g. my-app:tokens:"
      })
    }
    const { connection, lock } = yield* Shared.resolve("RedisTokenStore", checked)
    return (userId: string): TokenCache.TokenCache => {
      const key = userKey(prefix, userId)
      return Cache.make(connection, key, { ...lock, lockKey: lockKey(key) })
    }
  })

/**
 * A store from {@link connect}: a `TokenStore` that owns its connection until `close()`.
 *
 * @since 2.0.0
 */
export interface ConnectedRedisTokenStore extends TokenStore.TokenStore {
  /** Closes the connection the store opened (not a `client` passed in). Idempotent. */
  readonly close: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * {@link make} for plain code: resolves to the store, or rejects with the SDK's TokenCacheError or
 * ConfigurationError.
 *
 * @since 2.0.0
 */
export const connect = async (options: Options): Promise<ConnectedRedisTokenStore> => {
  const { value: store, close } = await Shared.startScoped(make(options))
  return Object.assign((userId: string) => store(userId), { close, [Symbol.asyncDispose]: close })
}
