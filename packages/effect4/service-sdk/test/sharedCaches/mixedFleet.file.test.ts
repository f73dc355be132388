/**
 * A mixed fleet on one token file: processes of the Effect 3 line and of the Effect 4 line share the file, its lock
 * file and its format, against the emulator rotating refresh tokens (a rotated-out one is invalid_grant): one refresh
 * per expiry for the whole fleet, no invalid_grant, every process served the user's current token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"
import { buildBoth, runWorker } from "../support/fleet.js"

let emulator: RunningEmulator
beforeAll(async () => {
  buildBoth()
  emulator = await startEmulator(["--rotate-refresh-tokens", "--token-lifetime", "2"])
}, 120_000)
afterAll(async () => {
  await emulator?.stop()
})

describe("mixed fleet on one token file (Effect 3 and Effect 4 processes)", () => {
  it("one refresh per expiry, no invalid_grant, the login survives", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "e4-mixed-file-"))
    const path = join(dir, "token.json")
    const signedIn = await emulator.signIn()
    const now = Date.now() / 1000
    writeFileSync(
      path,
      JSON.stringify({
        access_token: signedIn.access_token,
        expires_at: now + signedIn.expires_in,
        refresh_token: signedIn.refresh_token,
        issued_at: now
      }),
      { mode: 0o600 }
    )
    const before = await emulator.stats()
    const durationMs = 7_000
    const config = {
      path,
      authUrl: emulator.authUrl,
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      // a 2 s token is short-lived against this skew: renewed half-way, once a second
      skew: "5 seconds",
      durationMs,
      pauseMs: 40
    }
    const reports = await Promise.all([
      runWorker(3, config),
      runWorker(4, config),
      runWorker(3, config),
      runWorker(4, config)
    ])
    const after = await emulator.stats()
    const refreshes = (after.tokenRequests.refresh_token ?? 0) - (before.tokenRequests.refresh_token ?? 0)
    // every token served was issued by one of the fleet's refreshes (or the sign-in): none was issued twice over
    const served = new Set(reports.flatMap((report) => report.tokens))

    console.info(
      `mixed fleet (file): ${refreshes} refreshes in ${durationMs / 1000} s, ${served.size} tokens served, calls: ${reports.map((r) => `E${r.line}=${r.calls}`).join(" ")}`
    )
    for (const report of reports) {
      expect(report.errors, `Effect ${report.line} worker errors`).toEqual([])
      expect(report.calls).toBeGreaterThan(10)
    }
    expect(served.size).toBeLessThanOrEqual(refreshes + 1)
    // renewals happen once a second for the whole fleet: about durationMs / 1 s, never once per process
    expect(refreshes).toBeGreaterThanOrEqual(3)
    expect(refreshes).toBeLessThanOrEqual(Math.ceil(durationMs / 1000) + 3)
    expect(after.tokenRequests.refresh_token! - before.tokenRequests.refresh_token!).toBe(refreshes)
    // both lines took part in the renewals' results
    expect(reports.filter((r) => r.line === 3).every((r) => r.tokens.length >= 2)).toBe(true)
    expect(reports.filter((r) => r.line === 4).every((r) => r.tokens.length >= 2)).toBe(true)
    // the file still holds a usable login (a refresh token), in the one stored format
    const entry = JSON.parse(readFileSync(path, "utf8"))
    expect(typeof entry.refresh_token).toBe("string")
    expect(entry.refresh_rejected).toBeUndefined()
  })
})
