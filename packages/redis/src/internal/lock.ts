/**
 * The cross-process lock: `SET lockKey <owner> NX PX <ttl>`, taken by polling with jitter until `lockWait` passes,
 * kept alive by a heartbeat while its holder works, and released only by its owner (compare-and-delete in Lua).
 * A lock lost to its TTL (a stalled holder) costs at worst a second token request: a holder never deletes or extends
 * a lock it no longer owns (and the entry's compare-and-set keeps its late write from replacing a newer token). An
 * acquisition that timed out deletes its own lock afterwards, since its `SET NX` may still run when Redis resumes.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import { TokenCacheError } from "service-sdk"
import { type Connection, script } from "./connection.js"

export interface LockOptions {
  readonly lockKey: string
  /** How long the lock outlives a holder that stopped renewing it (a crashed process). */
  readonly ttl: Duration.Duration
  /** How long to wait for the lock before failing with TokenCacheError. */
  readonly wait: Duration.Duration
  /** The pause between two tries, jittered to 50–150 %. */
  readonly pollInterval: Duration.Duration
}

/** How long a holder waits for its lock's release before going on (the release itself continues). */
const RELEASE_WAIT = Duration.millis(100)

/** How often a holder extends its lock: a third of its TTL, at least once a second. */
export const heartbeatInterval = (ttlMillis: number): number => Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))

const seconds = (millis: number) => `${Number((millis / 1000).toFixed(3))} s`

export const make = (connection: Connection, options: LockOptions) => {
  const { lockKey } = options
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const pollMillis = Math.max(1, Duration.toMillis(options.pollInterval))
  const heartbeatMillis = heartbeatInterval(ttlMillis)

  /** One try; `true` when this owner now holds the lock. */
  const tryAcquire = (owner: string) =>
    Effect.map(
      connection.run(`SET ${lockKey} NX`, (redis) => redis.set(lockKey, owner, "PX", ttlMillis, "NX")),
      (reply) => reply === "OK"
    )

  /** Never fails: a lock that cannot be released expires with its TTL. */
  const release = (owner: string) =>
    connection
      .run(`DEL ${lockKey}`, (redis) => script(redis, "serviceSdkLockRelease", lockKey, owner))
      .pipe(Effect.catchAll((error) => Effect.logWarning(`cannot release the token lock: ${error.message}`)))

  /**
   * The holder waits for its release only briefly: a Redis that stalled after the renewal has already cost the caller
   * one command timeout (the write), and the release must not add a second. It goes on in the background; later
   * commands of this process on the same connection are sent after it.
   */
  const releaseSoon = (owner: string) =>
    Effect.flatMap(Effect.forkDaemon(release(owner)), (releasing) =>
      // interruptible: the release step of `acquireUseRelease` is not, and the timeout must be able to stop waiting
      Effect.ignore(Effect.timeout(Effect.interruptible(Fiber.join(releasing)), RELEASE_WAIT))
    )

  /**
   * After an acquisition that failed (no reply in time): its `SET NX` may have been queued by a paused Redis and run
   * later, leaving a lock nobody holds. Deleting it by owner, sent after the `SET NX` on the same connection, runs
   * after it; tried again while Redis cannot be reached, for as long as such a lock would live.
   */
  const abandon = (owner: string) =>
    Effect.gen(function* () {
      for (let waited = 0; waited <= ttlMillis; waited += heartbeatMillis) {
        const deleted = yield* Effect.either(
          connection.run(`DEL ${lockKey}`, (redis) => script(redis, "serviceSdkLockRelease", lockKey, owner))
        )
        if (deleted._tag === "Right") return
        yield* Effect.sleep(Duration.millis(heartbeatMillis))
      }
    })

  /**
   * Polls until the lock is ours. Runs as `acquireUseRelease`'s (uninterruptible) acquire: only the pauses between
   * tries are interruptible, so a try that succeeded is always followed by its release.
   */
  const acquire = Effect.gen(function* () {
    const owner = randomUUID()
    const start = yield* Clock.currentTimeMillis
    while (true) {
      const acquired = yield* tryAcquire(owner).pipe(Effect.tapError(() => Effect.forkDaemon(abandon(owner))))
      if (acquired) return owner
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

  /**
   * Keeps the lock while its holder works, however long a token request takes. A lock lost to another owner is left
   * to it; one that vanished (FLUSHALL, Redis restarted) is taken again, so that others wait for this renewal.
   */
  const heartbeat = (owner: string) =>
    Effect.gen(function* () {
      let lost = false
      while (true) {
        yield* Effect.sleep(Duration.millis(heartbeatMillis))
        const extended = yield* Effect.either(
          connection.run(`PEXPIRE ${lockKey}`, (redis) =>
            script(redis, "serviceSdkLockExtend", lockKey, owner, ttlMillis)
          )
        )
        if (Either.isLeft(extended)) {
          yield* Effect.logDebug(`cannot extend the token lock: ${extended.left.message}`)
        } else if (extended.right !== 1 && !lost) {
          lost = true
          yield* Effect.logWarning(
            `lost the token lock "${lockKey}" on ${connection.address} (it expired): another process may renew too`
          )
        }
      }
    })

  /** Runs `use` with the lock held; `use` gets the owner id. */
  const withLock = <A, E, R>(
    use: (owner: string) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.acquireUseRelease(
      acquire,
      (owner) =>
        Effect.flatMap(Effect.fork(heartbeat(owner)), (beat) => Effect.ensuring(use(owner), Fiber.interrupt(beat))),
      releaseSoon
    )

  return withLock
}
