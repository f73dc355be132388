/**
 * The fleet when all is well (issue test 1) and two clients on one key (test 8), with fleets of real OS processes;
 * `inProcess` adds the line's own one-process tests (test 7) in the same world.
 */
import { expect, it } from "vitest"
import { scaled } from "../../support/load.js"
import type { WorkerRunner } from "./failover.js"
import {
  describeFaults,
  Fleet,
  otherClient,
  sleep,
  tokenRequests,
  uniqueKey,
  type World,
  workerConfig
} from "./fleet.js"

/** The suite, its fleets of `runners` taken in turn (plain `vitest` and Promises: the Effect 4 line runs it too). */
export const describeSteady = (
  name: string,
  runners?: ReadonlyArray<WorkerRunner>,
  inProcess?: (world: () => World) => void
): void =>
  describeFaults(name, { tokenLifetime: 3 }, (world) => {
    it("1. 8 processes × 50 callers, 5 expiries: one token request per expiry, no error", async () => {
      const key = uniqueKey()
      const fleet = await Fleet.start(
        Array.from({ length: 8 }, () => workerConfig(world(), key, { callers: 50, pauseMs: 50 })),
        runners
      )
      try {
        await sleep(500)
        await fleet.report()
        const before = (await tokenRequests(world())).total
        const started = Date.now()
        // 3 s tokens renewed 1 s early: one expiry every 2 s
        await sleep(10_300)
        const report = await fleet.report()
        const expiries = Math.floor((Date.now() - started) / 2000)
        const requests = (await tokenRequests(world())).total - before
        console.info(`fleet of 8: ${requests} token requests for ${expiries} expiries, longest call ${report.maxMs} ms`)
        expect(expiries).toBeGreaterThanOrEqual(5)
        expect(requests).toBeGreaterThanOrEqual(expiries - 1)
        expect(requests).toBeLessThanOrEqual(expiries + 1)
        expect(fleet.invalidGrants).toBe(0)
        expect(report.errors).toEqual({})
        expect(report.calls).toBeGreaterThan(1000)
        expect(report.maxMs).toBeLessThan(scaled(2000))
      } finally {
        await fleet.stop()
      }
    })

    it("8. two clients on one key: neither ever gets the other's token", async () => {
      const key = uniqueKey()
      const one = { scope: "user-read-private" }
      const two = { ...otherClient, scope: "user-read-email" }
      const fleet = await Fleet.start(
        [
          workerConfig(world(), key, one),
          workerConfig(world(), key, two),
          workerConfig(world(), key, one),
          workerConfig(world(), key, two)
        ],
        runners
      )
      try {
        await sleep(4500)
        const [a1, b1, a2, b2] = await Promise.all(fleet.workers.map((worker) => worker.report()))
        const clientOne = new Set([...a1!.tokens, ...a2!.tokens])
        const clientTwo = new Set([...b1!.tokens, ...b2!.tokens])
        expect(clientOne.size).toBeGreaterThan(0)
        expect(clientTwo.size).toBeGreaterThan(0)
        expect([...clientOne].filter((token) => clientTwo.has(token))).toEqual([])
        for (const report of [a1, b1, a2, b2]) expect(report!.errors).toEqual({})
        expect(fleet.invalidGrants).toBe(0)
        // the entry in Redis names the client that wrote it
        const entry = JSON.parse((await world().redis.admin.get(key)) ?? "{}")
        expect([world().emulator.clientId, otherClient.clientId]).toContain(entry.client_id)
        expect(entry.auth_url).toBe(world().emulator.authUrl)
      } finally {
        await fleet.stop()
      }
    })

    inProcess?.(world)
  })
