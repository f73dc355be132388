/**
 * A lock granted by a server that was promoted since this process's last lock (its replication id changed) makes the
 * holder settle, as after Redis was away, though no command of this process failed: the failover may have lost
 * writes that other processes are about to write again (Effect 4 line; the Effect 3 line's `replication.test.ts`).
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import { firstLockAfterPromotion } from "../../../redis/test/support/promotion.js"
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

const token = (accessToken: string, expiresIn: number) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    refreshToken: Redacted.make(`${accessToken}-refresh`),
    expiresAt: Date.now() / 1000 + expiresIn
  })

const accessOf = (text: string | null) =>
  text === null
    ? null
    : Option.match(TokenCache.decodeJson(text), { onNone: () => text, onSome: (t) => Redacted.value(t.accessToken) })

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
  it.live(
    "a write to a master that counts no replica (its link cut) is kept too, and written again after the entry went back",
    () =>
      Effect.gen(function* () {
        const key = `test:promoted:${randomUUID()}`
        const admin = pair!.master.admin
        const tokens = yield* RedisTokenCache.make({ url: `redis://127.0.0.1:${pair!.master.port}`, key })
        const older = token("at-1", 60)
        expect(yield* tokens.compareAndSet!(Option.none(), older)).toBe(true)
        pair!.replica.kill("SIGSTOP")
        try {
          // issue 44: the master drops the frozen replica's link, and counts no replica at all
          yield* Effect.promise(() => admin.call("CLIENT", "KILL", "TYPE", "replica"))
          const cut = yield* Effect.promise(() =>
            eventually(async () => (await replication(pair!.master, "connected_slaves")) === "0", 5000)
          )
          expect(cut).toBe(true)
          expect(yield* tokens.compareAndSet!(Option.some(older), token("at-2", 120))).toBe(true)
          // what a failover to that replica leaves: the older token of the chain
          yield* Effect.promise(() => admin.set(key, TokenCache.encodeJson(older)))
          const restored = yield* Effect.promise(() =>
            eventually(async () => accessOf(await admin.get(key)) === "at-2", 5000)
          )
          expect(restored).toBe(true)
        } finally {
          pair!.replica.kill("SIGCONT")
          // back in sync for the next tests
          yield* Effect.promise(() =>
            eventually(async () => (await replication(pair!.replica, "master_link_status")) === "up", 20_000)
          )
        }
      }).pipe(Effect.scoped),
    40_000
  )

  it.live(
    "after a promotion: holders wait once per connection, not once per user, and a lock lost while waiting is never run under",
    () =>
      Effect.gen(function* () {
        const prefix = `test:promoted:${randomUUID()}:`
        const admin = pair!.master.admin
        const store = yield* RedisTokenStore.make({ url: `redis://127.0.0.1:${pair!.master.port}`, prefix })
        const [a, b, c] = [store("a"), store("b"), store("c")]
        // first locks record the server's replication id
        for (const user of [a, b, c]) yield* user.withLock!(Effect.void)
        const before = yield* Effect.promise(() => replication(pair!.master, "master_replid"))
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
          eventually(async () => (await admin.set(`${prefix}probe`, "x").catch(() => "no")) === "OK", 10_000)
        )
        expect(yield* Effect.promise(() => replication(pair!.master, "master_replid"))).not.toBe(before)
        const start = Date.now()
        // user c's holder is granted the lock, and loses it while it waits (another process takes it over, for 4 s)
        const cLock = RedisTokenCache.lockKey(RedisTokenStore.userKey(prefix, "c"))
        const cRuns = yield* Effect.forkChild(c.withLock!(Effect.sync(() => Date.now())))
        const granted = yield* Effect.promise(() => eventually(async () => (await admin.get(cLock)) !== null, 5000))
        expect(granted).toBe(true)
        yield* Effect.promise(() => admin.set(cLock, randomUUID(), "PX", 4000))
        const ranA = yield* a.withLock!(Effect.sync(() => Date.now()))
        // the settling (2 s) from the first grant
        expect(ranA - start).toBeGreaterThanOrEqual(1500)
        // another user's first lock after the promotion meets the new id too: the connection has settled already
        const startB = Date.now()
        const ranB = yield* b.withLock!(Effect.sync(() => Date.now()))
        expect(ranB - startB).toBeLessThan(1000)
        // c's holder ran only once the lock that took over was gone, never under it
        const ranC = yield* Fiber.join(cRuns)
        expect(ranC - start).toBeGreaterThanOrEqual(3500)
      }).pipe(Effect.scoped),
    40_000
  )

  it.live(
    "a user's first lock after a promotion waits too, when the connection first met the server after it was away",
    () =>
      Effect.gen(function* () {
        const store = yield* RedisTokenStore.make({
          url: `redis://127.0.0.1:${pair!.master.port}`,
          prefix: `test:promoted:${randomUUID()}:`
        })
        const waits = yield* Effect.promise(() =>
          firstLockAfterPromotion(pair!, {
            lock: (userId) => Effect.runPromise(store(userId).withLock!(Effect.void)),
            read: (userId) => Effect.runPromise(Effect.isSuccess(store(userId).get))
          })
        )
        expect(waits.sameServer).toBeLessThan(1500)
        expect(waits.promoted).toBeGreaterThanOrEqual(1500)
      }).pipe(Effect.scoped),
    40_000
  )
})
