/**
 * The cross-process lock: `SET lockKey <owner> NX PX <ttl>`, taken by polling with jitter until `lockWait` passes,
 * kept alive by a heartbeat while its holder works, and released only by its owner (compare-and-delete in Lua).
 * A lock lost to its TTL (a stalled holder) costs at worst a second token request: a holder never deletes or extends
 * a lock it no longer owns.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import { TokenCacheError } from "service-sdk"
import type { Connection } from "./connection.js"

/** Deletes the lock only if `ARGV[1]` still owns it. */
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

/** Extends the lock to `ARGV[2]` ms only if `ARGV[1]` still owns it. */
const EXTEND = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`

export interface LockOptions {
  readonly lockKey: string
  /** How long the lock outlives a holder that stopped renewing it (a crashed process). */
  readonly ttl: Duration.Duration
  /** How long to wait for the lock before failing with TokenCacheError. */
  readonly wait: Duration.Duration
  /** The pause between two tries, jittered to 50–150 %. */
  readonly pollInterval: Duration.Duration
}

const seconds = (millis: number) => `${Number((millis / 1000).toFixed(3))} s`

export const make = (connection: Connection, options: LockOptions) => {
  const { lockKey } = options
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const pollMillis = Math.max(1, Duration.toMillis(options.pollInterval))
  const heartbeatMillis = Math.max(1, Math.floor(ttlMillis / 3))

  /** One try; `true` when this owner now holds the lock. */
  const tryAcquire = (owner: string) =>
    Effect.map(
      connection.run(`SET ${lockKey} NX`, (redis) => redis.set(lockKey, owner, "PX", ttlMillis, "NX")),
      (reply) => reply === "OK"
    )

  /**
   * Polls until the lock is ours. Runs as `acquireUseRelease`'s (uninterruptible) acquire: only the pauses between
   * tries are interruptible, so a try that succeeded is always followed by its release.
   */
  const acquire = Effect.gen(function* () {
    const owner = randomUUID()
    const start = yield* Clock.currentTimeMillis
    while (true) {
      if (yield* tryAcquire(owner)) return owner
      const waited = (yield* Clock.currentTimeMillis) - start
      if (waited >= waitMillis) {
        return yield* new TokenCacheError({
          message:
            `gave up waiting for the token lock "${lockKey}" on ${connection.address} after ${seconds(waited)}: ` +
            `another process holds it (a lock whose holder died expires within ${seconds(ttlMillis)})`
        })
      }
      const pause = Math.min(pollMillis * (yield* Random.nextRange(0.5, 1.5)), waitMillis - waited)
      yield* Effect.interruptible(Effect.sleep(Duration.millis(Math.max(1, pause))))
    }
  })

  /** Keeps the lock while its holder works, however long a token request takes; stops when the lock is lost. */
  const heartbeat = (owner: string) =>
    Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(Duration.millis(heartbeatMillis))
        const extended = yield* Effect.either(
          connection.run(`PEXPIRE ${lockKey}`, (redis) => redis.eval(EXTEND, 1, lockKey, owner, ttlMillis))
        )
        if (Either.isLeft(extended)) {
          yield* Effect.logDebug(`cannot extend the token lock: ${extended.left.message}`)
        } else if (extended.right !== 1) {
          return yield* Effect.logWarning(
            `lost the token lock "${lockKey}" on ${connection.address} (it expired): another process may renew too`
          )
        }
      }
    })

  /** Never fails: a lock that cannot be released expires with its TTL. */
  const release = (owner: string) =>
    connection
      .run(`DEL ${lockKey}`, (redis) => redis.eval(RELEASE, 1, lockKey, owner))
      .pipe(Effect.catchAll((error) => Effect.logWarning(`cannot release the token lock: ${error.message}`)))

  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.acquireUseRelease(
      acquire,
      (owner) => Effect.flatMap(Effect.fork(heartbeat(owner)), (beat) => Effect.ensuring(self, Fiber.interrupt(beat))),
      release
    )

  return withLock
}
