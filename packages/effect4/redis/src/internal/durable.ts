/**
 * Writes that outlive a failover. Redis replicates asynchronously: a write the master acknowledged may never reach
 * the replica that takes over when the master dies, and a rotated refresh token written so would be lost. So a write
 * to a server with replicas waits until one replica has it (`WAIT 1`), briefly; one that no replica confirmed in
 * time is kept by this process: checked again until a replica confirms it, and written again when the entry went
 * back to an older token of the same client (the failover lost it). Meanwhile the lock's holders wait a moment after
 * Redis was away (`lock.ts`). The same protocol as the Effect 3 line's (its `serviceSdkTokenKeep` script).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type Connection, liveMillis } from "./connection.js"

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

/** Keeps `text` under `key` until a replica confirms it, a newer token replaces it, or after a minute. */
const keep = (connection: Connection, key: string, text: string, ttl: number) =>
  Effect.gen(function* () {
    const deadline = liveMillis() + KEEP_FOR_MILLIS
    while (liveMillis() < deadline) {
      yield* Effect.sleep(KEEP_PAUSE)
      const reply = yield* Effect.result(connection.script(`SET ${key} (kept)`, "serviceSdkTokenKeep", key, text, ttl))
      if (Result.isFailure(reply) || !Array.isArray(reply.success)) continue
      const [state, replicas] = reply.success as [unknown, unknown]
      if (state === "restored") {
        yield* Effect.logWarning(
          `the token entry "${key}" on ${connection.address} had gone back to an older token (a failover lost ` +
            "a write no replica had confirmed); the newer one is written again"
        )
      }
      // a newer token, a sign-out or another application's value: nothing of ours to keep any more
      if (state !== "ours" && state !== "restored") return
      // a server without replicas (one promoted in a failover, say): there is nothing more to wait for
      if (Number(replicas) === 0) return
      if ((yield* replicasConfirming(connection, key)) >= 1) return
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
  replicas === 0
    ? Effect.void
    : Effect.gen(function* () {
        connection.health.replicated = true
        if ((yield* replicasConfirming(connection, key)) >= 1) return
        yield* Effect.logWarning(
          `no replica of Redis at ${connection.address} confirmed the token entry "${key}" within ` +
            `${REPLICA_WAIT_MILLIS} ms; this process keeps it until one does (and writes it again if a failover loses it)`
        )
        yield* Effect.forkIn(keep(connection, key, text, ttl), connection.scope)
      })
