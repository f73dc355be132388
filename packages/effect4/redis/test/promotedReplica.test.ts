/**
 * A lock granted by a server that was promoted since this process's last lock (its replication id changed) makes the
 * holder settle, as after Redis was away, though no command of this process failed: the failover may have lost
 * writes that other processes are about to write again (Effect 4 line; the Effect 3 line's `replication.test.ts`).
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import { findRedisServer } from "../../../redis/test/support/redisServer.js"
import { type Node, startReplicatedPair } from "../../../redis/test/support/topology.js"

/** Runs `check` every 20 ms until it holds, for at most `millis`; whether it did. */
const eventually = async (check: () => Promise<boolean>, millis: number) => {
  const end = Date.now() + millis
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

const replication = async (node: Node, field: string) =>
  String(await node.admin.info("replication")).match(new RegExp(`${field}:(\\w+)`))?.[1] ?? ""

describe.skipIf(findRedisServer() === undefined)("a promoted master (Effect 4)", () => {
  let pair: { readonly master: Node; readonly replica: Node; readonly stop: () => Promise<void> } | undefined
  beforeAll(async () => {
    pair = await startReplicatedPair()
  }, 60_000)
  afterAll(async () => {
    await pair?.stop()
  })

  it.live(
    "a lock granted by a server with a new replication id makes its holder wait, no command failed",
    () =>
      Effect.gen(function* () {
        const key = `test:promoted:${randomUUID()}`
        const tokens = yield* RedisTokenCache.make({ url: `redis://127.0.0.1:${pair!.master.port}`, key })
        // a first lock records the server's replication id
        yield* tokens.withLock!(Effect.void)
        const before = yield* Effect.promise(() => replication(pair!.master, "master_replid"))
        // two coordinated failovers (FAILOVER, Redis 6.2+): the same server is the master again, with a new
        // replication id, as a replica promoted by a failover has; this client's connection saw nothing of it
        for (const [from, to] of [
          [pair!.master, pair!.replica],
          [pair!.replica, pair!.master]
        ] as const) {
          yield* Effect.promise(() => from.admin.call("FAILOVER"))
          const done = yield* Effect.promise(() =>
            eventually(
              async () => (await replication(to, "role")) === "master" && (await replication(from, "role")) === "slave",
              10_000
            )
          )
          expect(done).toBe(true)
        }
        yield* Effect.promise(() =>
          eventually(async () => (await pair!.master.admin.set(`${key}:probe`, "x").catch(() => "no")) === "OK", 10_000)
        )
        expect(yield* Effect.promise(() => replication(pair!.master, "master_replid"))).not.toBe(before)
        const start = Date.now()
        const ranAt = yield* tokens.withLock!(Effect.sync(() => Date.now()))
        // the settling (2 s) from the grant
        expect(ranAt - start).toBeGreaterThanOrEqual(1500)
      }).pipe(Effect.scoped),
    40_000
  )
})
