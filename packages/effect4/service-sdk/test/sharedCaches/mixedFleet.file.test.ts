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
import { buildBoth, runMixedFleet } from "../support/fleet.js"

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
    await runMixedFleet("file", emulator, { path }, expect)
    // the file still holds a usable login (a refresh token), in the one stored format
    const entry = JSON.parse(readFileSync(path, "utf8"))
    expect(typeof entry.refresh_token).toBe("string")
    expect(entry.refresh_rejected).toBeUndefined()
  })
})
