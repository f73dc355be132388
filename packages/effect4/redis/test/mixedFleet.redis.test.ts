/**
 * A mixed fleet on one Redis: processes of the Effect 3 line (`@service-sdk/redis` 1.x) and of the Effect 4 line
 * (2.x) share one entry and its lock, against the emulator rotating refresh tokens (a rotated-out one is
 * invalid_grant): one refresh per expiry for the whole fleet, no invalid_grant, every process served the user's token.
 */
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningEmulator, startEmulator } from "../../service-sdk/test/support/emulator.js"
import { buildBoth, runMixedFleet } from "../../service-sdk/test/support/fleet.js"
import { type RunningRedis, redisAvailable, startRedis } from "./support/redisServer.js"

let emulator: RunningEmulator
let redis: RunningRedis
beforeAll(async () => {
  if (!redisAvailable) return
  buildBoth()
  redis = await startRedis()
  emulator = await startEmulator(["--rotate-refresh-tokens", "--token-lifetime", "2"])
}, 120_000)
afterAll(async () => {
  await emulator?.stop()
  await redis?.stop()
})

describe.skipIf(!redisAvailable)("mixed fleet on one Redis (Effect 3 and Effect 4 processes)", () => {
  it("one refresh per expiry, no invalid_grant, the login survives", { timeout: 120_000 }, async () => {
    const key = "service-sdk:token:mixed-fleet"
    const signedIn = await emulator.signIn()
    const now = Date.now() / 1000
    const client = new Redis(redis.url)
    await client.set(
      key,
      JSON.stringify({
        access_token: signedIn.access_token,
        expires_at: now + signedIn.expires_in,
        refresh_token: signedIn.refresh_token,
        issued_at: now
      })
    )
    await runMixedFleet("Redis", emulator, { redisUrl: redis.url, key }, expect)
    const entry = JSON.parse((await client.get(key))!)
    await client.quit()
    expect(typeof entry.refresh_token).toBe("string")
    expect(entry.refresh_rejected).toBeUndefined()
  })
})
