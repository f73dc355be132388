/**
 * A `TokenCache` over one Redis connection and one key, so that several caches (one per user) can share one
 * connection. It declares the two members of a shared cache: `withLock` (`SET NX PX` + heartbeat, see `lock.ts`)
 * and `compareAndSet` (one Lua script, see `entry.ts`); the providers use them as they would a user's own cache's.
 */
import * as Effect from "effect/Effect"
import type { TokenCache } from "@service-sdk/effect"
import type { Connection } from "./connection.js"
import * as Entry from "./entry.js"
import * as Lock from "./lock.js"

/** The cache of `key` over `connection`. */
export const make = (connection: Connection, key: string, lock: Lock.LockOptions): TokenCache.TokenCache => {
  const withLock = Lock.make(connection, lock)
  return {
    get: Effect.withSpan(Entry.read(connection, key), "RedisTokenCache.get"),
    set: (token) => Effect.withSpan(Entry.write(connection, key, token), "RedisTokenCache.set"),
    // forgets the entry (sign-out); the provider calls it under `withLock`, and renewals elsewhere write only by
    // compare-and-set, which an entry that is gone refuses
    clear: Effect.withSpan(Entry.clear(connection, key), "RedisTokenCache.clear"),
    withLock: (self) => Effect.withSpan(withLock(self), "RedisTokenCache.withLock"),
    compareAndSet: (expected, next) =>
      Effect.withSpan(Entry.compareAndSet(connection, key, expected, next), "RedisTokenCache.compareAndSet")
  }
}
