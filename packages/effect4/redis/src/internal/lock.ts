/**
 * The cross-process lock (the protocol of `shared/redisProtocol.ts`, shared with the Effect 3 line): taken by polling
 * with jitter until `wait` passes, kept alive by a heartbeat while its holder works, released only by its owner. A
 * lock lost to its TTL (a stalled holder) costs at worst a second token request: the entry's compare-and-set keeps a
 * late write from replacing a newer token.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import { TokenCacheError } from "service-sdk"
import { type Connection, script } from "./connection.js"
import { heartbeatInterval } from "./shared/redisProtocol.js"

export interface LockOptions {
  readonly lockKey: string
  readonly ttl: Duration.Duration
  readonly wait: Duration.Duration
  readonly pollInterval: Duration.Duration
}

export const make = (connection: Connection, options: LockOptions) => {
  const { lockKey } = options
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const pollMillis = Math.max(1, Duration.toMillis(options.pollInterval))
  const beatMillis = heartbeatInterval(ttlMillis)

  const acquire = Effect.gen(function* () {
    const owner = randomUUID()
    const start = yield* Clock.currentTimeMillis
    while (true) {
      const reply = yield* connection.run(`SET ${lockKey} NX`, (redis) =>
        script(redis, "serviceSdkLockAcquire", lockKey, owner, ttlMillis)
      )
      if (reply === 1) return owner
      if (typeof reply === "string") {
        return yield* new TokenCacheError({
          message: `the Redis key "${lockKey}" on ${connection.address} holds another application's value (a ${reply}); it is left alone: pick another key`
        })
      }
      const waited = (yield* Clock.currentTimeMillis) - start
      if (waited >= waitMillis) {
        return yield* new TokenCacheError({
          message: `gave up waiting for the token lock "${lockKey}" on ${connection.address} after ${(waited / 1000).toFixed(1)} s: another process holds it`
        })
      }
      const pause = Math.min(pollMillis * (yield* Random.nextBetween(0.5, 1.5)), waitMillis - waited)
      yield* Effect.interruptible(Effect.sleep(Duration.millis(Math.max(1, pause))))
    }
  })

  const heartbeat = (owner: string) =>
    Effect.gen(function* () {
      let lost = false
      while (true) {
        yield* Effect.sleep(Duration.millis(beatMillis))
        const extended = yield* Effect.result(
          connection.run(`PEXPIRE ${lockKey}`, (redis) =>
            script(redis, "serviceSdkLockExtend", lockKey, owner, ttlMillis)
          )
        )
        if (extended._tag === "Success" && extended.success !== 1 && !lost) {
          lost = true
          yield* Effect.logWarning(
            `lost the token lock "${lockKey}" on ${connection.address}: another process may renew too`
          )
        }
      }
    })

  const release = (owner: string) =>
    connection
      .run(`DEL ${lockKey}`, (redis) => script(redis, "serviceSdkLockRelease", lockKey, owner))
      .pipe(
        Effect.catch((error) =>
          Effect.logWarning(`cannot release the token lock "${lockKey}": ${error.message}; it expires by itself`)
        )
      )

  return <A, E, R>(use: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.acquireUseRelease(
      acquire,
      (owner) =>
        Effect.flatMap(Effect.forkChild(heartbeat(owner)), (beat) => Effect.ensuring(use, Fiber.interrupt(beat))),
      release
    )
}
