/**
 * A Redis token store: one shared cache per user (`prefix` + the encoded user id), for `UserTokens` in a fleet.
 *
 * @since 2.0.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ConfigurationError, type TokenCacheError, type TokenStore } from "service-sdk"
import * as Cache from "./internal/cache.js"
import * as Shared from "./internal/options.js"
import { lockKey, userKey } from "./internal/shared/redisProtocol.js"

/**
 * The options: a connection (`client` or `url`), the keys' `prefix`, and the lock's timing.
 *
 * @since 2.0.0
 */
export interface Options extends Shared.SharedOptions {
  readonly prefix: string
}

/**
 * The key of a user's entry (the same as the Effect 3 line's).
 *
 * @since 2.0.0
 */
export { userKey }

/**
 * The store; a connection it opened is closed with the scope.
 *
 * @since 2.0.0
 */
export const make = (
  options: Options
): Effect.Effect<TokenStore.TokenStore, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    if (typeof options?.prefix !== "string" || options.prefix === "") {
      return yield* new ConfigurationError({
        message: "RedisTokenStore needs a prefix for its keys, e.g. my-app:tokens:"
      })
    }
    const { prefix } = options
    const { connection, lock } = yield* Shared.resolve("RedisTokenStore", options)
    return (userId: string) => {
      const key = userKey(prefix, userId)
      return Cache.make(connection, key, { ...lock, lockKey: lockKey(key) })
    }
  })
