/**
 * A lock holder that stops or dies mid-renewal (issue tests 2, 3 and 6): a holder paused past its lock TTL
 * (SIGSTOP), one killed after the server rotated its refresh token (SIGKILL), and a FLUSHALL during a renewal.
 */
import { createHash } from "node:crypto"
import { expect, it } from "vitest"
import { racePausesMillis } from "@service-sdk/shared/fleetRules"
import { scaled } from "../../support/load.js"
import type { WorkerRunner } from "./failover.js"
import {
  describeFaults,
  Fleet,
  sleep,
  storeSignIn,
  tokenRequests,
  uniqueKey,
  until,
  type World,
  workerConfig
} from "./fleet.js"

const hash = (token: string) => createHash("sha256").update(token).digest("hex").slice(0, 12)

const entryOf = async (world: World, key: string) => {
  const text = await world.redis.admin.get(key)
  return text === null ? undefined : (JSON.parse(text) as Record<string, unknown>)
}

/** How long a provider reads the entry after an `invalid_grant` before it marks the refresh token rejected. */
const RACE_WINDOW_MILLIS = racePausesMillis(true).reduce((sum, pause) => sum + pause, 0)

// The bounds below are the contract's (lock TTL, command timeout) plus slack for a token request and scheduling; the
// slack grows with the machine's load (`scaled`), the contract's part does not.
/** The suite, its fleets of `runners` taken in turn (plain `vitest` and Promises: the Effect 4 line runs it too). */
export const describeHolders = (name: string, runners?: ReadonlyArray<WorkerRunner>): void =>
  describeFaults(name, { tokenLifetime: 3 }, (world) => {
    it("2a. a holder SIGSTOPped past the lock TTL (client credentials): its late token never replaces the newer one", async () => {
      await world().emulator.configure({ rotateRefreshTokens: false })
      const key = uniqueKey()
      const fleet = await Fleet.start(
        Array.from({ length: 3 }, () => workerConfig(world(), key, { hook: "stop-after-response" })),
        runners
      )
      try {
        await sleep(500)
        const holder = await fleet.armOne()
        const others = fleet.workers.filter((worker) => worker !== holder)
        await fleet.report(others)
        await sleep(4000) // lock TTL 2 s: another process renews meanwhile
        const duringPause = await fleet.report(others)
        holder.signal("SIGCONT")
        // what Redis holds while the holder resumes and finishes its renewal (sampled as fast as Redis answers)
        const seen = new Set<string>()
        for (const end = Date.now() + 1000; Date.now() < end; ) {
          const entry = await entryOf(world(), key)
          if (entry !== undefined) seen.add(hash(String(entry.access_token)))
        }
        expect(seen.size).toBeGreaterThan(0)
        expect([...seen]).not.toContain(holder.hookToken)
        await sleep(800)
        await fleet.report()
        await sleep(2000)
        const after = await fleet.report()
        const holderAfter = await holder.report()
        expect(holderAfter.tokens).not.toContain(holder.hookToken)
        expect(duringPause.errors).toEqual({})
        expect(duringPause.maxMs).toBeLessThan(2000 + scaled(2000))
        expect(after.errors).toEqual({})
        expect(after.maxMs).toBeLessThan(scaled(1500))
        expect(fleet.invalidGrants).toBe(0)
      } finally {
        await fleet.stop()
      }
    })

    it("2b. a holder SIGSTOPped past the lock TTL (rotating refresh tokens): at most 1 invalid_grant, then all work", async () => {
      await world().emulator.configure({ rotateRefreshTokens: true })
      const key = uniqueKey()
      await storeSignIn(world(), key)
      const fleet = await Fleet.start(
        Array.from({ length: 3 }, () =>
          workerConfig(world(), key, { grant: "authorization_code", hook: "stop-after-response" })
        ),
        runners
      )
      try {
        await sleep(500)
        const holder = await fleet.armOne()
        const others = fleet.workers.filter((worker) => worker !== holder)
        await fleet.report(others)
        await sleep(4000)
        const duringPause = await fleet.report(others)
        holder.signal("SIGCONT")
        await sleep(1000)
        await fleet.report()
        await sleep(2000)
        const after = await fleet.report()
        const entry = await entryOf(world(), key)
        expect(fleet.invalidGrants).toBeLessThanOrEqual(1)
        // while the holder was stopped, callers failed only with AuthenticationError (the rejected refresh token),
        // at once, and without a request per call
        expect(Object.keys(duringPause.errors).filter((tag) => tag !== "AuthenticationError")).toEqual([])
        expect(duringPause.maxMs).toBeLessThan(2000 + scaled(2000))
        // the holder's rotated refresh token, the newest one, reached Redis: the fleet works again
        expect(after.errors).toEqual({})
        expect(after.tokens.length).toBeGreaterThan(0)
        expect(after.maxMs).toBeLessThan(scaled(1500))
        expect(entry?.refresh_rejected).toBeUndefined()
      } finally {
        await fleet.stop()
      }
    })

    it("3. a holder SIGKILLed after the server rotated its refresh token: one invalid_grant, then none until a new sign-in", async () => {
      await world().emulator.configure({ rotateRefreshTokens: true })
      const key = uniqueKey()
      await storeSignIn(world(), key)
      const fleet = await Fleet.start(
        Array.from({ length: 3 }, () =>
          workerConfig(world(), key, { grant: "authorization_code", hook: "kill-after-response" })
        ),
        runners
      )
      try {
        await sleep(500)
        const holder = await fleet.armOne()
        await until(() => !holder.alive, 2000)
        // the dead holder's lock expires (2 s), one process tries the rotated-out refresh token, reads the entry for
        // a newer one as long as a failover's kept write may take (2.5 s, `shared/fleetRules.ts`), then marks it
        await sleep(2000 + RACE_WINDOW_MILLIS + 1000)
        await fleet.report()
        const before = await tokenRequests(world())
        await sleep(2000)
        const stuck = await fleet.report()
        const during = await tokenRequests(world())
        expect(fleet.workers.every((worker) => worker.invalidGrants <= 1)).toBe(true)
        expect(fleet.invalidGrants).toBe(1)
        expect(during.total - before.total).toBe(0)
        expect(Object.keys(stuck.errors)).toEqual(["AuthenticationError"])
        expect(stuck.maxMs).toBeLessThan(scaled(1000))
        expect((await entryOf(world(), key))?.refresh_rejected).toBe(true)

        // a new sign-in stored in the cache recovers every process
        await storeSignIn(world(), key)
        await sleep(1000)
        await fleet.report()
        await sleep(2000)
        const recovered = await fleet.report()
        expect(recovered.errors).toEqual({})
        expect(recovered.tokens.length).toBeGreaterThan(0)
        expect(fleet.invalidGrants).toBe(1)
      } finally {
        await fleet.stop()
      }
    })

    it("6. FLUSHALL during a renewal with rotating refresh tokens: no invalid_grant", async () => {
      await world().emulator.configure({ rotateRefreshTokens: true })
      const key = uniqueKey()
      await storeSignIn(world(), key)
      const fleet = await Fleet.start(
        Array.from({ length: 3 }, () => workerConfig(world(), key, { grant: "authorization_code" })),
        runners
      )
      try {
        await sleep(500)
        await fleet.report()
        const requested = fleet.workers.reduce((sum, worker) => sum + worker.tokenRequests, 0)
        // the next renewal's answer takes 800 ms: Redis is flushed while it is on its way
        await world().emulator.injectFault({ target: "token", count: 1, delayMs: 800 })
        const renewing = await until(
          () => fleet.workers.reduce((sum, worker) => sum + worker.tokenRequests, 0) > requested,
          4000
        )
        expect(renewing).toBe(true)
        await world().redis.admin.flushall()
        await sleep(3000)
        const report = await fleet.report()
        await sleep(2000)
        const after = await fleet.report()
        expect(fleet.invalidGrants).toBe(0)
        expect(report.errors).toEqual({})
        expect(after.errors).toEqual({})
        expect(report.maxMs).toBeLessThan(scaled(3000))
        expect(typeof (await entryOf(world(), key))?.refresh_token).toBe("string")
      } finally {
        await fleet.stop()
      }
    })
  })
