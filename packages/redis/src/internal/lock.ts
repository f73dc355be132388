/**
 * The cross-process lock: `SET lockKey <owner> NX PX <ttl>` (in a script that also recognises its own owner, so a
 * try sent again after a lost reply is not mistaken for another holder), taken by polling with jitter until
 * `lockWait` passes, kept alive by a heartbeat while its holder works, and released only by its owner
 * (compare-and-delete in Lua). A lock lost to its TTL (a stalled holder) costs at worst a second token request: a
 * holder never deletes or extends a lock it no longer owns (and the entry's compare-and-set keeps its late write from
 * replacing a newer token). A release that failed (a failover, Redis away) and an acquisition that timed out (its
 * `SET NX` may still run when Redis resumes) are both retried in the background until the lock's TTL has passed, so
 * neither leaves a lock behind for longer than it takes Redis to answer again.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import { TokenCacheError } from "@service-sdk/effect"
import { type Connection, neighbour, script } from "./connection.js"
import { lockAcquired, promotionWatch } from "@service-sdk/shared/redisProtocol"

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
 * (`durable.ts`), before anyone renews from the older entry (whose refresh token may be rotated out already).
 */
export const FAILOVER_SETTLE_MILLIS = 2000

/** The settling is in real time (the other processes' writes are), whatever clock the caller's effects have. */
const liveClock = Clock.make()

/** How long a holder waits for its lock's release before going on (the release itself continues). */
const RELEASE_WAIT = Duration.millis(100)

/** How often a holder extends its lock: every third of its TTL, and at least once a second. */
export const heartbeatInterval = (ttlMillis: number): number => Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))

const seconds = (millis: number) => `${Number((millis / 1000).toFixed(3))} s`

export const make = (connection: Connection, options: LockOptions) => {
  const { lockKey } = options
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const pollMillis = Math.max(1, Duration.toMillis(options.pollInterval))
  const heartbeatMillis = heartbeatInterval(ttlMillis)

  const promoted = promotionWatch(connection.health.replids)

  /**
   * One try; `true` when this owner now holds the lock; another application's value at the key is a failure. A try
   * answered by a server with a new replication id (a promoted replica) counts as Redis having been away: the holder
   * settles.
   */
  const tryAcquire = (owner: string) =>
    Effect.flatMap(
      connection.run(`SET ${lockKey} NX`, (redis) => script(redis, "serviceSdkLockAcquire", lockKey, owner, ttlMillis)),
      (reply) => {
        if (typeof reply === "string") return Effect.fail(neighbour(connection.address, lockKey, reply, "lock"))
        const { acquired, replid } = lockAcquired(reply)
        const since = promoted(replid, liveClock.unsafeCurrentTimeMillis(), connection.health.awayAt)
        if (since !== undefined) connection.health.awayAt = Math.max(connection.health.awayAt, since)
        return Effect.succeed(acquired)
      }
    )

  /**
   * Deletes `owner`'s lock, tried again while Redis cannot be reached, until the lock would have expired anyway (a
   * lock lives at most its TTL after its owner's last extension, which was before this). Never fails.
   */
  const deleteOwn = (owner: string, why: string) =>
    Effect.gen(function* () {
      const deadline = (yield* Clock.currentTimeMillis) + ttlMillis
      let warned = false
      while (true) {
        const deleted = yield* Effect.either(
          connection.run(`DEL ${lockKey}`, (redis) => script(redis, "serviceSdkLockRelease", lockKey, owner))
        )
        if (Either.isRight(deleted)) {
          if (warned) yield* Effect.logInfo(`the token lock "${lockKey}" ${why} was released on a later try`)
          return
        }
        if ((yield* Clock.currentTimeMillis) + heartbeatMillis > deadline) {
          return yield* Effect.logWarning(
            `cannot release the token lock "${lockKey}" ${why}: ${deleted.left.message}; it expires by itself`
          )
        }
        if (!warned) {
          warned = true
          yield* Effect.logWarning(
            `cannot release the token lock "${lockKey}" ${why} yet (${deleted.left.message}); trying again until it would expire`
          )
        }
        yield* Effect.sleep(Duration.millis(heartbeatMillis))
      }
    })

  /**
   * The holder waits for its release only briefly: a Redis that stalled after the renewal has already cost the caller
   * one command timeout (the write), and the release must not add a second. It goes on in the background (tried
   * again until the lock's TTL when it fails); later commands of this process on the same connection follow it.
   */
  const releaseSoon = (owner: string) =>
    Effect.flatMap(Effect.forkDaemon(deleteOwn(owner, "after its renewal")), (releasing) =>
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
        Effect.tapError(() => Effect.forkDaemon(deleteOwn(owner, "of an acquisition that failed")))
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
        yield* Effect.interruptible(Effect.withClock(Effect.sleep(Duration.millis(left)), liveClock)).pipe(
          Effect.onInterrupt(() => Effect.forkDaemon(deleteOwn(owner, "of an acquisition interrupted while settling")))
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
      const pause = Math.min(pollMillis * (yield* Random.nextRange(0.5, 1.5)), waitMillis - waited)
      yield* Effect.interruptible(Effect.sleep(Duration.millis(Math.max(1, pause))))
    }
  })

  /**
   * Keeps the lock while its holder works, however long a token request takes. A lock lost to another owner is left
   * to it; one that vanished (FLUSHALL, Redis restarted, a failover that lost it) is taken again, so that others wait
   * for this renewal.
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
        } else if (typeof extended.right === "string" && !lost) {
          lost = true
          yield* Effect.logWarning(neighbour(connection.address, lockKey, extended.right, "lock").message)
        } else if (extended.right !== 1 && !lost) {
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
    return replicated ? awayAt + FAILOVER_SETTLE_MILLIS - liveClock.unsafeCurrentTimeMillis() : 0
  }

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
