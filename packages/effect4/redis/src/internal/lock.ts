/**
 * The cross-process lock: `SET lockKey <owner> NX PX <ttl>` (in a script that also recognises its own owner, so a
 * try sent again after a lost reply is not mistaken for another holder), taken by polling with jitter until
 * `lockWait` passes, kept alive by a heartbeat while its holder works, and released only by its owner
 * (compare-and-delete in Lua). A holder never deletes or extends a lock it no longer owns. A release that failed and
 * an acquisition that timed out are both retried in the background until the lock's TTL has passed, so neither
 * leaves a lock behind for longer than it takes Redis to answer again. Same keys, values and scripts as the Effect 3
 * line's lock: processes of both lines exclude each other.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import { TokenCacheError } from "@service-sdk/effect"
import { type Connection, liveClock, liveMillis } from "./connection.js"
import { heartbeatInterval, lockAcquired, promotionWatch } from "@service-sdk/shared/redisProtocol"
import { neighbourMessage } from "@service-sdk/shared/redisClient"

export interface LockOptions {
  readonly lockKey: string
  /** How long the lock outlives a holder that stopped extending it (a crashed process, a lost release). */
  readonly ttl: Duration.Duration
  /** How long to wait for the lock before failing with TokenCacheError. */
  readonly wait: Duration.Duration
  /** The pause between two tries, jittered to 50–150 %. */
  readonly pollInterval: Duration.Duration
}

/**
 * How long after Redis was away (a failover) a holder waits before it runs, when the servers have replicas: a
 * failover may have lost writes no replica confirmed, and the processes that made them write them again within this
 * (`durable.ts`), before anyone renews from the older entry.
 */
export const FAILOVER_SETTLE_MILLIS = 2000

/** How long a holder waits for its lock's release before going on (the release itself continues). */
const RELEASE_WAIT = Duration.millis(100)

const seconds = (millis: number) => `${Number((millis / 1000).toFixed(3))} s`

export const make = (connection: Connection, options: LockOptions) => {
  const { lockKey } = options
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const pollMillis = Math.max(1, Duration.toMillis(options.pollInterval))
  const heartbeatMillis = heartbeatInterval(ttlMillis)

  const neighbour = (kind: string) => neighbourMessage(connection.address, lockKey, kind, "lock")

  const promoted = promotionWatch(connection.health.replids)

  /**
   * One try; `true` when this owner now holds the lock; another application's value at the key is a failure. A try
   * answered by a server with a new replication id (a promoted replica) counts as Redis having been away: the holder
   * settles.
   */
  const tryAcquire = (owner: string) =>
    Effect.flatMap(
      connection.script(`SET ${lockKey} NX`, "serviceSdkLockAcquire", lockKey, owner, ttlMillis),
      (reply) => {
        if (typeof reply === "string") return Effect.fail(new TokenCacheError({ message: neighbour(reply) }))
        const { acquired, replid } = lockAcquired(reply)
        const since = promoted(replid, liveMillis(), connection.health.awayAt)
        if (since !== undefined) connection.health.awayAt = Math.max(connection.health.awayAt, since)
        return Effect.succeed(acquired)
      }
    )

  /**
   * Deletes `owner`'s lock, tried again while Redis cannot be reached, until the lock would have expired anyway.
   * Never fails.
   */
  const deleteOwn = Effect.fnUntraced(function* (owner: string, why: string) {
    const deadline = (yield* Clock.currentTimeMillis) + ttlMillis
    let warned = false
    while (true) {
      const deleted = yield* Effect.result(connection.script(`DEL ${lockKey}`, "serviceSdkLockRelease", lockKey, owner))
      if (Result.isSuccess(deleted)) {
        if (warned) yield* Effect.logInfo(`the token lock "${lockKey}" ${why} was released on a later try`)
        return
      }
      if ((yield* Clock.currentTimeMillis) + heartbeatMillis > deadline) {
        return yield* Effect.logWarning(
          `cannot release the token lock "${lockKey}" ${why}: ${deleted.failure.message}; it expires by itself`
        )
      }
      if (!warned) {
        warned = true
        yield* Effect.logWarning(
          `cannot release the token lock "${lockKey}" ${why} yet (${deleted.failure.message}); trying again until it would expire`
        )
      }
      yield* Effect.sleep(Duration.millis(heartbeatMillis))
    }
  })

  /**
   * The holder waits for its release only briefly: a Redis that stalled after the renewal has already cost the caller
   * one command timeout, and the release must not add a second. It goes on in the background.
   */
  const releaseSoon = (owner: string) =>
    Effect.flatMap(Effect.forkDetach(deleteOwn(owner, "after its renewal")), (releasing) =>
      // interruptible: the release step of `acquireUseRelease` is not, and the timeout must be able to stop waiting
      Effect.ignore(Effect.timeout(Effect.interruptible(Fiber.join(releasing)), RELEASE_WAIT))
    )

  /**
   * Polls until the lock is ours. Runs as `acquireUseRelease`'s (uninterruptible) acquire: only the pauses between
   * tries are interruptible, so a try that succeeded is always followed by its release. A try that failed (no reply
   * in time) may still run later on a paused Redis: its lock is deleted in the background.
   */
  const acquire = Effect.gen(function* () {
    const owner = randomUUID()
    const start = yield* Clock.currentTimeMillis
    while (true) {
      const acquired = yield* tryAcquire(owner).pipe(
        Effect.tapError(() => Effect.forkDetach(deleteOwn(owner, "of an acquisition that failed")))
      )
      if (acquired) {
        // Just after a failover: the kept writes of other processes land first (`settle`), and then the lock is tried
        // again, which extends it if it is still ours; one lost meanwhile (taken over after the failover) is waited
        // for like any other. So a holder never reads the entry, and sends the refresh token it holds, under a lock
        // it lost while it settled.
        const left = settleLeft()
        if (left <= 0) return owner
        yield* Effect.logDebug(
          `Redis was away (a failover?): waiting ${Math.ceil(left)} ms for lost writes to be restored`
        )
        yield* Effect.interruptible(
          Effect.provideService(Effect.sleep(Duration.millis(left)), Clock.Clock, liveClock)
        ).pipe(
          Effect.onInterrupt(() => Effect.forkDetach(deleteOwn(owner, "of an acquisition interrupted while settling")))
        )
        continue
      }
      const waited = (yield* Clock.currentTimeMillis) - start
      if (waited >= waitMillis) {
        return yield* new TokenCacheError({
          message:
            `gave up waiting for the token lock "${lockKey}" on ${connection.address} after ${seconds(waited)}: ` +
            `another process holds it (a lock nobody extends expires within ${seconds(ttlMillis)})`
        })
      }
      const pause = Math.min(pollMillis * (yield* Random.nextBetween(0.5, 1.5)), waitMillis - waited)
      yield* Effect.interruptible(Effect.sleep(Duration.millis(Math.max(1, pause))))
    }
  })

  /**
   * Keeps the lock while its holder works. A lock lost to another owner is left to it; one that vanished (FLUSHALL,
   * Redis restarted, a failover that lost it) is taken again, so that others wait for this renewal.
   */
  const heartbeat = Effect.fnUntraced(function* (owner: string) {
    let lost = false
    while (true) {
      yield* Effect.sleep(Duration.millis(heartbeatMillis))
      const extended = yield* Effect.result(
        connection.script(`PEXPIRE ${lockKey}`, "serviceSdkLockExtend", lockKey, owner, ttlMillis)
      )
      if (Result.isFailure(extended)) {
        yield* Effect.logDebug(`cannot extend the token lock: ${extended.failure.message}`)
      } else if (typeof extended.success === "string" && !lost) {
        lost = true
        yield* Effect.logWarning(neighbour(extended.success))
      } else if (extended.success !== 1 && !lost) {
        lost = true
        yield* Effect.logWarning(
          `lost the token lock "${lockKey}" on ${connection.address} (it expired): another process may renew too`
        )
      }
    }
  })

  /**
   * How long (ms) a holder still waits just after Redis was away, with replicas: the moment the kept writes of other
   * processes need to land.
   */
  const settleLeft = () => {
    const { awayAt, replicated } = connection.health
    return replicated ? awayAt + FAILOVER_SETTLE_MILLIS - liveMillis() : 0
  }

  /** Runs `self` with the lock held. */
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.acquireUseRelease(
      acquire,
      (owner) =>
        Effect.flatMap(Effect.forkChild(heartbeat(owner)), (beat) => Effect.ensuring(self, Fiber.interrupt(beat))),
      releaseSoon
    )
}
