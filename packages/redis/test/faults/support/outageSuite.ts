/**
 * Redis itself under faults (issue tests 4 and 5): writes paused (`CLIENT PAUSE 9000 WRITE`), and Redis stopped for
 * 30 s then restarted empty.
 */
import { expect, it } from "vitest"
import { scaled } from "../../support/load.js"
import type { WorkerRunner } from "./failover.js"
import { describeFaults, Fleet, sleep, storeSignIn, tokenRequests, uniqueKey, until, workerConfig } from "./fleet.js"

// 30 s of outage plus start-up and checks: more than the project's default timeout on a loaded machine
const live = (name: string, body: () => Promise<void>) => it(name, body, 180_000)

/** The workers' command timeout (1 s), and the bound on a call because of the cache: that plus a token request. */
const COMMAND_TIMEOUT_MS = 1000

/** The suite, its fleets of `runners` taken in turn (plain `vitest` and Promises: the Effect 4 line runs it too). */
export const describeOutage = (name: string, runners?: ReadonlyArray<WorkerRunner>): void =>
  describeFaults(name, { tokenLifetime: 3 }, (world) => {
    live("4. CLIENT PAUSE 9000 WRITE: no ownerless lock afterwards; token requests resume within 2 s", async () => {
      const key = uniqueKey()
      const lockKey = `${key}:lock`
      await storeSignIn(world(), key)
      // the default lock TTL (30 s): a lock left behind would stop the fleet for that long
      const fleet = await Fleet.start(
        Array.from({ length: 3 }, () =>
          workerConfig(world(), key, { grant: "authorization_code", lockTtl: "30 seconds" })
        ),
        runners
      )
      try {
        await sleep(1000)
        await fleet.report()
        await world().redis.admin.call("CLIENT", "PAUSE", "9000", "WRITE")
        const resumes = Date.now() + 9000
        await sleep(resumes - Date.now())
        const before = (await tokenRequests(world())).refresh_token
        const paused = await fleet.report()
        const resumed = await until(async () => (await tokenRequests(world())).refresh_token > before, 2000)
        const resumedAfter = Date.now() - resumes
        expect(resumed).toBe(true)
        expect(await until(async () => (await world().redis.admin.exists(lockKey)) === 0, 2000)).toBe(true)
        await sleep(1000)
        await fleet.report()
        await sleep(2000)
        const after = await fleet.report()
        console.info(`CLIENT PAUSE: token requests resumed ${resumedAfter} ms after Redis answered`)
        // while writes were paused, the authorization code fails with TokenCacheError (never a refresh outside the
        // fleet lock), each call within the command timeout (and a little)
        expect(Object.keys(paused.errors).filter((tag) => tag !== "TokenCacheError")).toEqual([])
        expect(paused.maxMs).toBeLessThan(2 * COMMAND_TIMEOUT_MS + scaled(1000))
        expect(after.errors).toEqual({})
        expect(after.maxMs).toBeLessThan(scaled(1500))
        expect(fleet.invalidGrants).toBe(0)
      } finally {
        await fleet.stop()
      }
    })

    live(
      "5. Redis stopped for 30 s, restarted empty: client credentials keep serving, one request per process per expiry, then shared again",
      async () => {
        const key = uniqueKey()
        const fleet = await Fleet.start(
          Array.from({ length: 4 }, () => workerConfig(world(), key)),
          runners
        )
        try {
          await sleep(1000)
          await fleet.report()
          await world().redis.stop()
          const down = Date.now()
          const beforeDown = (await tokenRequests(world())).total
          await sleep(30_000)
          const whileDown = await fleet.report()
          const requestsDown = (await tokenRequests(world())).total - beforeDown
          const expiriesDown = (Date.now() - down) / 2000
          await world().redis.start()
          await sleep(3000) // reconnection (ioredis retries every 2 s at most) and one expiry
          await fleet.report()
          const beforeUp = (await tokenRequests(world())).total
          const up = Date.now()
          await sleep(4000)
          const afterRestart = await fleet.report()
          const requestsUp = (await tokenRequests(world())).total - beforeUp
          const expiriesUp = (Date.now() - up) / 2000
          console.info(
            `Redis down 30 s: ${requestsDown} token requests for ${expiriesDown.toFixed(1)} expiries × 4 processes, ` +
              `longest call ${whileDown.maxMs} ms; after restart ${requestsUp} for ${expiriesUp.toFixed(1)} expiries`
          )
          expect(whileDown.errors).toEqual({})
          expect(whileDown.calls).toBeGreaterThan(1000)
          expect(requestsDown).toBeLessThanOrEqual(4 * (Math.ceil(expiriesDown) + 1))
          // each process's first renewal of the outage waits one command timeout for Redis before renewing alone
          expect(requestsDown).toBeGreaterThanOrEqual(4 * (Math.floor(expiriesDown) - 2))
          // command timeout + one token request (the emulator answers in a few ms) + 1 s
          expect(whileDown.maxMs).toBeLessThan(COMMAND_TIMEOUT_MS + scaled(1500))
          expect(afterRestart.errors).toEqual({})
          expect(requestsUp).toBeLessThanOrEqual(Math.ceil(expiriesUp) + 1)
          expect(fleet.invalidGrants).toBe(0)
        } finally {
          await fleet.stop()
        }
      }
    )
  })
