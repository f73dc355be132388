/**
 * A `TokenCache` over one Redis connection and one key, so that several caches (one per user) can share one
 * connection. Inside `withLock`, `set` is a compare-and-set against the entry `get` read under that lock.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type { TokenCache, TokenInfo } from "service-sdk"
import type { Connection } from "./connection.js"
import * as Entry from "./entry.js"
import * as Lock from "./lock.js"

/** What a holder of the lock read: the raw entry, once `get` ran under the lock. */
interface Held {
  read: Option.Option<string | null>
}

/**
 * How long a provider that finds the shared entry gone (a FLUSHALL, a Redis restarted empty) while it still holds a
 * refresh token waits before using it: long enough for a renewal under way elsewhere to take its lock again (its
 * heartbeat does) and store its rotated refresh token. Read by the single flight of service-sdk.
 */
const VanishedGrace = Symbol.for("service-sdk/TokenCache/vanishedGrace")

/** The cache of `key` over `connection`. */
export const make = (connection: Connection, key: string, lock: Lock.LockOptions): TokenCache.TokenCache => {
  const held = FiberRef.unsafeMake<Held | undefined>(undefined)
  const withLock = Lock.make(connection, lock)

  const get = Effect.flatMap(FiberRef.get(held), (holder) =>
    Effect.map(Entry.readRaw(connection, key), (raw) => {
      if (holder !== undefined) holder.read = Option.some(raw)
      return Entry.decode(raw)
    })
  )

  const set = (token: TokenInfo) =>
    Effect.flatMap(FiberRef.get(held), (holder) => {
      if (holder === undefined || Option.isNone(holder.read)) return Entry.write(connection, key, token)
      return Effect.flatMap(Entry.compareAndSet(connection, key, holder.read.value, token), (written) => {
        if (Option.isSome(written)) {
          holder.read = Option.some(written.value)
          return Effect.void
        }
        return Effect.logDebug(
          `RedisTokenCache: the entry "${key}" changed since it was read under the lock (another process renewed): kept`
        )
      })
    })

  const cache: TokenCache.TokenCache = {
    get: Effect.withSpan(get, "RedisTokenCache.get"),
    set: (token) => Effect.withSpan(set(token), "RedisTokenCache.set"),
    // forgets the entry (sign-out); the provider calls it under `withLock`, so no renewal of this key is under way
    clear: Effect.withSpan(
      Effect.asVoid(connection.run(`DEL ${key}`, (redis) => redis.del(key))),
      "RedisTokenCache.clear"
    ),
    withLock: (self) =>
      Effect.withSpan(
        withLock(() => Effect.locally(self, held, { read: Option.none() })),
        "RedisTokenCache.withLock"
      )
  }
  Object.defineProperty(cache, VanishedGrace, {
    value: 2 * Lock.heartbeatInterval(Math.round(Duration.toMillis(lock.ttl))) + 250,
    enumerable: false
  })
  return cache
}
