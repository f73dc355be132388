/**
 * Writes that outlive a failover. Redis replicates asynchronously: a write the master acknowledged may never reach
 * the replica that takes over when the master dies, and a rotated refresh token written so would be lost. So a write
 * to a server with replicas waits until one replica has it (`WAIT 1`), briefly; one that no replica confirmed in
 * time is kept by this process: checked again until a replica confirms it, and written again when the entry went
 * back to an older token of the same client (the failover lost it). Meanwhile the lock's holders wait a moment after
 * Redis was away (`lock.ts`). The same protocol as the Effect 3 line's (its `serviceSdkTokenKeep` script).
 *
 * A master that counts no replica at the moment of the write (its replica's link cut, the replica frozen or
 * restarting; issue 44) confirms nothing either: on a connection that has seen replicas, such a write is kept too.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type Connection, liveMillis } from "./connection.js"
import { keptReply } from "@service-sdk/shared/redisProtocol"

/** How long a write waits for a replica to confirm it before it is kept in the background. */
export const REPLICA_WAIT_MILLIS = 500
/** The pause between two checks of a kept write. */
const KEEP_PAUSE = Duration.millis(100)
/** How long a write is kept at most (a replica lagging that long is gone for the master too). */
const KEEP_FOR_MILLIS = 60_000

/** How many replicas have everything this connection wrote to `key`'s master (`WAIT` on that master). */
const replicasConfirming = (connection: Connection, key: string): Effect.Effect<number> =>
  connection
    .run(`WAIT 1 (${key})`, (redis) =>
      // a keyed command first, so that a Cluster sends the pipeline (and WAIT) to the master of `key`
      redis
        .pipeline([
          ["exists", key],
          ["wait", "1", String(REPLICA_WAIT_MILLIS)]
        ])
        .exec()
    )
    .pipe(
      Effect.map((results) => {
        const [error, count] = results?.[1] ?? [null, 0]
        return error === null ? Number(count) || 0 : 0
      }),
      Effect.orElseSucceed(() => 0)
    )

/**
 * Keeps `text` under `key` until a replica acknowledges it, a newer token replaces it, or after a minute: checked
 * every {@link KEEP_PAUSE} (one script, which also writes it again when the entry went back to an older token) and
 * confirmed by the replicas' acknowledged offset, never by `WAIT` (which would hold up every other command of the
 * connection, the lock's heartbeats included, for as long as a replica lags). A server that has no replica connected
 * now (its link cut, or one promoted in a failover) is no reason to stop: a replica that comes back, or takes over,
 * may not have the write.
 */
const keep = (connection: Connection, key: string, text: string, ttl: number) =>
  Effect.gen(function* () {
    const deadline = liveMillis() + KEEP_FOR_MILLIS
    let target: number | undefined
    while (liveMillis() < deadline) {
      const reply = yield* Effect.result(connection.script(`SET ${key} (kept)`, "serviceSdkTokenKeep", key, text, ttl))
      if (Result.isFailure(reply) || !Array.isArray(reply.success)) {
        yield* Effect.sleep(KEEP_PAUSE)
        continue
      }
      const kept = keptReply(reply.success, target)
      if (kept.state === "restored") {
        yield* Effect.logWarning(
          `the token entry "${key}" on ${connection.address} had gone back to an older token (a failover lost ` +
            "a write no replica had confirmed); the newer one is written again"
        )
      }
      // a newer token, a sign-out or another application's value: nothing of ours to keep any more
      if (kept.state !== "ours" && kept.state !== "restored") return
      if (kept.confirmed) return
      target = kept.target
      yield* Effect.sleep(KEEP_PAUSE)
    }
    yield* Effect.logWarning(
      `no replica of Redis at ${connection.address} confirmed the token entry "${key}" within ` +
        `${KEEP_FOR_MILLIS / 1000} s; it is no longer watched`
    )
  })

/**
 * After a write of `text` under `key` to a server with `replicas`: waits briefly for one of them to confirm it, else
 * keeps it in the background (in the connection's scope). The write has landed either way.
 */
export const confirm = (
  connection: Connection,
  key: string,
  text: string,
  ttl: number,
  replicas: number
): Effect.Effect<void> =>
  replicas === 0 && !connection.health.replicated
    ? Effect.void
    : Effect.gen(function* () {
        if (replicas > 0) {
          connection.health.replicated = true
          if ((yield* replicasConfirming(connection, key)) >= 1) return
        }
        yield* (replicas > 0 ? Effect.logWarning : Effect.logDebug)(
          `no replica of Redis at ${connection.address} confirmed the token entry "${key}" ` +
            (replicas > 0 ? `within ${REPLICA_WAIT_MILLIS} ms` : "(none is connected)") +
            "; this process keeps it until one does (and writes it again if a failover loses it)"
        )
        yield* Effect.forkIn(keep(connection, key, text, ttl), connection.scope)
      })
