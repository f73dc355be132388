/**
 * A mixed fleet on one token file, and on one user's entry of a shared `TokenStore.directory`: processes of the Effect 3 line and of the Effect 4 line share the file, its lock
 * file and its format, against the emulator rotating refresh tokens (a rotated-out one is invalid_grant): one refresh
 * per expiry for the whole fleet, no invalid_grant, every process served the user's current token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TokenStore } from "@service-sdk/effect"
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

/** Writes a fresh sign-in of the emulator's user to `path` (0600), as a sign-in of either line would. */
const signIn = async (path: string) => {
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
}

/** The entry still holds a usable login (a refresh token), in the one stored format. */
const stillSignedIn = (path: string) => {
  const entry = JSON.parse(readFileSync(path, "utf8"))
  expect(typeof entry.refresh_token).toBe("string")
  expect(entry.refresh_rejected).toBeUndefined()
}

describe("mixed fleet on one token file (Effect 3 and Effect 4 processes)", () => {
  it("one refresh per expiry, no invalid_grant, the login survives", { timeout: 120_000 }, async () => {
    const path = join(mkdtempSync(join(tmpdir(), "e4-mixed-file-")), "token.json")
    await signIn(path)
    await runMixedFleet("file", emulator, { path }, expect)
    stillSignedIn(path)
  })
})

describe("mixed fleet on one user of a TokenStore.directory (Effect 3 and Effect 4 processes)", () => {
  it("one refresh per expiry, no invalid_grant, the login survives", { timeout: 120_000 }, async () => {
    const directory = mkdtempSync(join(tmpdir(), "e4-mixed-dir-"))
    const userId = "ada@example.com"
    const path = join(directory, TokenStore.fileName(userId))
    await signIn(path)
    await runMixedFleet("directory", emulator, { directory, userId }, expect)
    stillSignedIn(path)
  })
})
