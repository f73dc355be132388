/**
 * The fleet when all is well (issue test 1) and the one-process rules it relies on (tests 7 and 8): one token request
 * per expiry, short-lived tokens, two clients on one key.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { RedisTokenCache } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { ClientCredentials } from "service-sdk"
import { scaled } from "../support/load.js"
import { describeFaults, Fleet, otherClient, sleep, tokenRequests, uniqueKey, workerConfig } from "./support/fleet.js"

describeFaults("the fleet, all well", { tokenLifetime: 3 }, (world) => {
  it.live("1. 8 processes × 50 callers, 5 expiries: one token request per expiry, no error", () =>
    Effect.promise(async () => {
      const key = uniqueKey()
      const fleet = await Fleet.start(
        Array.from({ length: 8 }, () => workerConfig(world(), key, { callers: 50, pauseMs: 50 }))
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
  )

  it.live("8. two clients on one key: neither ever gets the other's token", () =>
    Effect.promise(async () => {
      const key = uniqueKey()
      const one = { scope: "user-read-private" }
      const two = { ...otherClient, scope: "user-read-email" }
      const fleet = await Fleet.start([
        workerConfig(world(), key, one),
        workerConfig(world(), key, two),
        workerConfig(world(), key, one),
        workerConfig(world(), key, two)
      ])
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
  )

  it.live(
    "7. one process, expires_in 10 with the default skew: 100 concurrent and 20 sequential calls, 1 request",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => world().emulator.configure({ tokenLifetime: 10 }))
        const before = (yield* Effect.promise(() => tokenRequests(world()))).total
        const tokenCache = yield* RedisTokenCache.make({ url: world().redis.url, key: uniqueKey() })
        const provider = yield* ClientCredentials.make({
          clientId: world().emulator.clientId,
          clientSecret: world().emulator.clientSecret,
          authUrl: world().emulator.authUrl,
          tokenCache
        })
        const started = Date.now()
        const herd = yield* Effect.all(
          Array.from({ length: 100 }, () => Effect.either(provider.getAccessToken)),
          { concurrency: "unbounded" }
        )
        let longest = Date.now() - started
        for (let call = 0; call < 20; call++) {
          const start = Date.now()
          yield* provider.getAccessToken
          longest = Math.max(longest, Date.now() - start)
        }
        const elapsed = Date.now() - started
        const requests = (yield* Effect.promise(() => tokenRequests(world()))).total - before
        expect(herd.filter((result) => result._tag === "Left")).toEqual([])
        const herdTokens = new Set(herd.map((result) => (result._tag === "Right" ? Redacted.value(result.right) : "")))
        // the short-lived token (10 s ≤ 2 × the 30 s skew) is renewed half-way through its life, never on every call:
        // one request, plus one per 5 s the calls lasted (none on a quiet machine, where they take well under 1 s)
        const most = 1 + Math.floor(elapsed / 5000)
        console.info(`one process, 120 calls over ${elapsed} ms: ${requests} token request(s), at most ${most}`)
        expect(requests).toBeGreaterThanOrEqual(1)
        expect(requests).toBeLessThanOrEqual(most)
        expect(herdTokens.size).toBeLessThanOrEqual(requests)
        expect(longest).toBeLessThan(scaled(2000))
        yield* Effect.promise(() => world().emulator.configure({ tokenLifetime: 3 }))
      }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
  )
})
