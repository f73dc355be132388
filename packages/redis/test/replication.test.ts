/**
 * Writes to a server with replicas (issue 28): a write waits for a replica to confirm it (`WAIT 1`); one that no
 * replica confirmed (the replica lagging) is kept by the process that made it and written again when the entry goes
 * back to an older token of its chain (what a failover that lost it leaves), never over a newer token; and a lock
 * holder waits a moment after Redis was away, for such writes to land before it renews.
 */
import { randomUUID } from "node:crypto"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/redis"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import { firstLockAfterPromotion } from "./support/promotion.js"
import { startProxy } from "./support/proxy.js"
import { findRedisServer } from "./support/redisServer.js"
import { fillReplicationLink, type Node, startReplicatedPair } from "./support/topology.js"

const token = (accessToken: string, refreshToken: string, expiresIn: number) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    refreshToken: Redacted.make(refreshToken),
    expiresAt: Date.now() / 1000 + expiresIn
  })

const accessOf = (text: string | null) =>
  text === null
    ? null
    : Option.match(TokenCache.decodeJson(text), { onNone: () => text, onSome: (t) => Redacted.value(t.accessToken) })

/** Runs `check` every 20 ms until it holds, for at most `millis`; whether it did. */
const eventually = (check: () => Promise<boolean>, millis: number) =>
  Effect.promise(async () => {
    const end = Date.now() + millis
    while (Date.now() < end) {
      if (await check()) return true
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return check()
  })

const binary = findRedisServer()
if (binary === undefined) console.warn("\n*** SKIPPING the Redis replication tests: no redis-server. ***\n")

describe.skipIf(binary === undefined)("Redis writes with replicas", () => {
  let pair: { readonly master: Node; readonly replica: Node; readonly stop: () => Promise<void> } | undefined
  beforeAll(async () => {
    pair = await startReplicatedPair()
  }, 60_000)
  afterAll(async () => {
    pair?.replica.kill("SIGCONT")
    await pair?.stop()
  })
  const url = () => `redis://127.0.0.1:${pair!.master.port}`
  const admin = () => pair!.master.admin

  it.scopedLive(
    "a write no replica confirmed is written again after the entry went back to an older token, never over a newer one",
    () =>
      Effect.gen(function* () {
        const key = `test:replication:${randomUUID()}`
        const logs = yield* Ref.make<ReadonlyArray<string>>([])
        const logger = Logger.make(({ message }) =>
          Effect.runSync(Ref.update(logs, (all) => [...all, String(message)]))
        )
        const tokens = yield* RedisTokenCache.make({ url: url(), key }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        const cas = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
          tokens.compareAndSet!(expected, next).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        const older = token("at-1", "rt-1", 60)
        expect(yield* cas(Option.none(), older)).toBe(true)
        // confirmed by the replica at once: nothing kept, nothing said
        expect(yield* Ref.get(logs)).toEqual([])
        expect(accessOf(yield* Effect.promise(() => pair!.replica.admin.get(key)))).toBe("at-1")

        // the replica falls behind: the next write lands on the master, unconfirmed
        pair!.replica.kill("SIGSTOP")
        try {
          yield* Effect.promise(() => fillReplicationLink(pair!.master, key))
          const newer = token("at-2", "rt-2", 120)
          expect(yield* cas(Option.some(older), newer)).toBe(true)
          expect((yield* Ref.get(logs)).filter((line) => line.includes("no replica"))).toHaveLength(1)

          // what a failover that lost the write leaves: the older token of the chain
          yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(older)))
          const restored = yield* eventually(async () => accessOf(await admin().get(key)) === "at-2", 5000)
          expect(restored).toBe(true)
          expect(yield* Effect.promise(() => admin().pttl(key))).toBe(-1)
          expect((yield* Ref.get(logs)).some((line) => line.includes("written again"))).toBe(true)

          // a newer token from elsewhere is left alone: the kept write is no longer ours to keep
          const newest = token("at-3", "rt-3", 180)
          yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(newest)))
          yield* Effect.sleep("1500 millis")
          expect(accessOf(yield* Effect.promise(() => admin().get(key)))).toBe("at-3")
        } finally {
          pair!.replica.kill("SIGCONT")
        }
      }),
    30_000
  )

  it.scopedLive(
    "a write to a master that counts no replica (its link cut) is kept too, and written again after the entry went back",
    () =>
      Effect.gen(function* () {
        const key = `test:replication:${randomUUID()}`
        const tokens = yield* RedisTokenCache.make({ url: url(), key })
        const older = token("at-1", "rt-1", 60)
        expect(yield* tokens.compareAndSet!(Option.none(), older)).toBe(true)
        pair!.replica.kill("SIGSTOP")
        try {
          // issue 44: the master drops the frozen replica's link, and counts no replica at all
          yield* Effect.promise(() => admin().call("CLIENT", "KILL", "TYPE", "replica"))
          const cut = yield* eventually(async () => /connected_slaves:0/.test(await admin().info("replication")), 5000)
          expect(cut).toBe(true)
          const newer = token("at-2", "rt-2", 120)
          expect(yield* tokens.compareAndSet!(Option.some(older), newer)).toBe(true)
          // what a failover to that replica leaves: the older token of the chain
          yield* Effect.promise(() => admin().set(key, TokenCache.encodeJson(older)))
          const restored = yield* eventually(async () => accessOf(await admin().get(key)) === "at-2", 5000)
          expect(restored).toBe(true)
        } finally {
          pair!.replica.kill("SIGCONT")
          // back in sync for the next tests
          yield* eventually(
            async () => /master_link_status:up/.test(await pair!.replica.admin.info("replication")),
            20_000
          )
        }
      }),
    40_000
  )

  it.scopedLive(
    "after a promotion (a new replication id): holders wait once per connection, not once per user, and a lock lost while waiting is never run under",
    () =>
      Effect.gen(function* () {
        const prefix = `test:replication:${randomUUID()}:`
        const store = yield* RedisTokenStore.make({ url: url(), prefix })
        const [a, b, c] = [store("a"), store("b"), store("c")]
        const replidOf = async (node: Node) =>
          String(await node.admin.info("replication")).match(/master_replid:(\w+)/)?.[1] ?? ""
        const roleOf = async (node: Node) => String(await node.admin.info("replication")).match(/role:(\w+)/)?.[1]
        // first locks record the server's replication id
        for (const user of [a, b, c]) yield* user.withLock!(Effect.void)
        const before = yield* Effect.promise(() => replidOf(pair!.master))
        // two coordinated failovers (FAILOVER, Redis 6.2+): the same server is the master again, with a new
        // replication id, as a replica promoted by a failover has; this client's connection saw nothing of it
        for (const [from, to] of [
          [pair!.master, pair!.replica],
          [pair!.replica, pair!.master]
        ] as const) {
          yield* Effect.promise(() => from.admin.call("FAILOVER"))
          const done = yield* eventually(
            async () => (await roleOf(to)) === "master" && (await roleOf(from)) === "slave",
            10_000
          )
          expect(done).toBe(true)
        }
        yield* eventually(async () => {
          const answer = await Promise.resolve(pair!.master.admin.set(`${prefix}probe`, "x")).catch(() => "no")
          return answer === "OK"
        }, 10_000)
        expect(yield* Effect.promise(() => replidOf(pair!.master))).not.toBe(before)
        const start = Date.now()
        // user c's holder is granted the lock, and loses it while it waits (another process takes it over, for 4 s)
        const cLock = RedisTokenCache.lockKey(RedisTokenStore.userKey(prefix, "c"))
        const cRuns = yield* Effect.fork(c.withLock!(Effect.sync(() => Date.now())))
        const granted = yield* eventually(async () => (await admin().get(cLock)) !== null, 5000)
        expect(granted).toBe(true)
        yield* Effect.promise(() => admin().set(cLock, randomUUID(), "PX", 4000))
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
      }),
    40_000
  )

  it.scopedLive("after Redis was away, a holder waits before it runs (the servers have replicas)", () =>
    Effect.gen(function* () {
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startProxy(pair!.master.port)),
        (proxy) => Effect.promise(() => proxy.close())
      )
      const key = `test:replication:${randomUUID()}`
      const tokens = yield* RedisTokenCache.make({ url: proxy.url, key, commandTimeout: "300 millis" })
      proxy.cut()
      // a command meets Redis away (a failover, as far as this process can tell)
      expect((yield* Effect.either(tokens.get))._tag).toBe("Left")
      proxy.restore()
      const back = Date.now()
      // once the client has reconnected
      while ((yield* Effect.either(tokens.get))._tag === "Left") yield* Effect.sleep("50 millis")
      const ranAt = yield* tokens.withLock!(Effect.sync(() => Date.now()))
      // the settling is 2 s from the last failure, which came before `back`
      expect(ranAt - back).toBeGreaterThanOrEqual(1000)
    })
  )

  it.scopedLive(
    "a user's first lock after a promotion waits too, when the connection first met the server after it was away",
    () =>
      Effect.gen(function* () {
        const store = yield* RedisTokenStore.make({ url: url(), prefix: `test:replication:${randomUUID()}:` })
        const waits = yield* Effect.promise(() =>
          firstLockAfterPromotion(pair!, {
            lock: (userId) => Effect.runPromise(store(userId).withLock!(Effect.void)),
            read: (userId) => Effect.runPromise(Effect.isSuccess(store(userId).get))
          })
        )
        expect(waits.sameServer).toBeLessThan(1500)
        expect(waits.promoted).toBeGreaterThanOrEqual(1500)
      }),
    40_000
  )
})
