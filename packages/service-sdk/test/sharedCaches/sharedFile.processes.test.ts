/**
 * Processes of one machine sharing one token file (TokenCache.file's lock file and compare-and-set, and a cache
 * written by hand that declares the same members) against the emulator rotating refresh tokens, which answers a
 * rotated-out one with invalid_grant. What the contract promises: no refresh token presented twice (one refresh per
 * expiry), no invalid_grant, no caller error, and the login survives (the entry's refresh token is accepted).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Emulator } from "@service-sdk/emulator"
import * as Effect from "effect/Effect"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import * as Redacted from "effect/Redacted"
import { buildPackages, duplicates, Fleet, sleep, Worker, type WorkerConfig } from "../shared/processes.js"

const LIFETIME_S = 2
const SKEW = "0.5 seconds"
/** A token is renewed this often (its lifetime less the skew). */
const RENEW_EVERY_MS = LIFETIME_S * 1000 - 500

const live = (name: string, body: () => Promise<void>, timeout = 120_000) =>
  it.live(name, () => Effect.promise(body), timeout)

let emulator: Awaited<ReturnType<typeof Emulator.start>>
let dir: string
beforeAll(async () => {
  buildPackages()
  emulator = await Emulator.start({ rotateRefreshTokens: true, tokenLifetime: LIFETIME_S })
  dir = mkdtempSync(join(tmpdir(), "shared-file-"))
}, 120_000)
afterAll(async () => {
  await emulator?.close()
  rmSync(dir, { recursive: true, force: true })
})

let files = 0
/** A token file with a signed-in user whose access token is already stale (the first expiry is at once). */
const signedInFile = async (server = emulator) => {
  const path = join(dir, `tokens-${files++}.json`)
  const tokens = await server.signIn({ userId: "shared-user", expiresIn: 1 })
  const entry = new TokenInfo({
    accessToken: Redacted.make(tokens.access_token),
    expiresAt: Date.now() / 1000 + 1,
    refreshToken: Redacted.make(tokens.refresh_token)
  })
  writeFileSync(path, TokenCache.encodeJson(entry), { mode: 0o600 })
  return path
}

const config = (path: string, mode: WorkerConfig["mode"], server = emulator): WorkerConfig => ({
  mode,
  path,
  authUrl: server.authUrl,
  clientId: server.clientId,
  clientSecret: server.clientSecret,
  callers: 10,
  skew: SKEW
})

/** The refresh token of the entry in `path`, presented once more: the server must accept it. */
const loginSurvives = async (path: string, server = emulator) => {
  const entry = JSON.parse(readFileSync(path, "utf8")) as { refresh_token?: string }
  expect(typeof entry.refresh_token).toBe("string")
  const response = await fetch(`${server.authUrl}/api/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${server.clientId}:${server.clientSecret}`).toString("base64")}`
    },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: entry.refresh_token! }).toString()
  })
  expect(response.status).toBe(200)
}

/** Runs the fleet until its refresh tokens were presented `expiries` times; returns what it saw. */
const runFleet = async (configs: ReadonlyArray<WorkerConfig>, expiries = 3) => {
  const t0 = Date.now()
  const fleet = await Fleet.start(configs)
  if (process.env.SHARED_DEBUG) console.log(`started ${configs.length} in ${Date.now() - t0} ms`)
  try {
    const start = Date.now()
    fleet.go()
    const end = start + 40_000
    while (fleet.presented.length < expiries && Date.now() < end) await sleep(50)
    if (process.env.SHARED_DEBUG) console.log(`presented ${fleet.presented.length} in ${Date.now() - start} ms`)
    await fleet.pause()
    const elapsed = Date.now() - start
    const report = await fleet.report()
    return { fleet, report, elapsed }
  } finally {
    await fleet.stop()
  }
}

describe("one token file shared by processes (TokenCache.file)", () => {
  for (const processes of [2, 4, 8]) {
    live(`${processes} processes × 10 callers, 3 expiries: one refresh per expiry, no invalid_grant`, async () => {
      const path = await signedInFile()
      const { fleet, report, elapsed } = await runFleet(Array.from({ length: processes }, () => config(path, "file")))
      expect(report.errors).toEqual({})
      expect(fleet.invalidGrants).toBe(0)
      expect(duplicates(fleet.presented)).toEqual([])
      expect(fleet.presented.length).toBeGreaterThanOrEqual(3)
      expect(fleet.presented.length).toBeLessThanOrEqual(Math.ceil(elapsed / RENEW_EVERY_MS) + 1)
      expect(report.calls).toBeGreaterThan(processes * 10)
      await loginSurvives(path)
    })
  }

  live("a cache written by hand that declares withLock and compareAndSet gets the same guarantees", async () => {
    const path = await signedInFile()
    const { fleet, report } = await runFleet([1, 2, 3].map(() => config(path, "handWritten")))
    expect(report.errors).toEqual({})
    expect(fleet.invalidGrants).toBe(0)
    expect(duplicates(fleet.presented)).toEqual([])
    await loginSurvives(path)
  })

  live(
    "without withLock (compareAndSet only): the losers of a race serve the winner's token; the login survives",
    async () => {
      const path = await signedInFile()
      const { fleet, report } = await runFleet([1, 2, 3].map(() => config(path, "casOnly")))
      // races happen (no lock): a loser's refresh token was rotated out, but it serves the winner's token
      expect(report.errors).toEqual({})
      expect(fleet.presented.length).toBeGreaterThanOrEqual(3)
      await loginSurvives(path)
    }
  )

  live("processes with different lockTtl (2 s and 30 s) still single-flight: one refresh per expiry", async () => {
    // a slow token endpoint: a renewal holds the lock long enough for the other process to find it held
    const slow = await Emulator.start({ rotateRefreshTokens: true, tokenLifetime: LIFETIME_S, tokenLatencyMs: 600 })
    try {
      const path = await signedInFile(slow)
      const { fleet, report } = await runFleet(
        ["2 seconds", "30 seconds"].map((lockTtl) => ({ ...config(path, "file", slow), lockTtl })),
        4
      )
      expect(report.errors).toEqual({})
      expect(fleet.invalidGrants).toBe(0)
      // a waiter honours the TTL its holder wrote: the 2 s process never takes the 30 s one's lock at once
      expect(duplicates(fleet.presented)).toEqual([])
      await loginSurvives(path, slow)
    } finally {
      await slow.close()
    }
  })

  live("a lock holder SIGKILLed while it holds the lock file: the others go on, nothing is lost", async () => {
    const path = await signedInFile()
    const holder = await Worker.start({ ...config(path, "holdLock"), lockTtl: "3 seconds" })
    const end = Date.now() + 20_000
    while (!holder.locked && Date.now() < end) await sleep(20)
    expect(holder.locked).toBe(true)
    holder.signal("SIGKILL")
    const { fleet, report } = await runFleet(
      [1, 2].map(() => ({ ...config(path, "file"), lockTtl: "3 seconds" })),
      1
    )
    expect(report.errors).toEqual({})
    expect(fleet.invalidGrants).toBe(0)
    expect(duplicates(fleet.presented)).toEqual([])
    await loginSurvives(path)
  })

  live(
    "a lock holder frozen (SIGSTOP) while it holds the lock file: the others go on after the lock's expiry",
    async () => {
      const path = await signedInFile()
      const holder = await Worker.start({ ...config(path, "holdLock"), lockTtl: "2 seconds" })
      try {
        const end = Date.now() + 20_000
        while (!holder.locked && Date.now() < end) await sleep(20)
        expect(holder.locked).toBe(true)
        holder.signal("SIGSTOP")
        const { fleet, report } = await runFleet(
          [1, 2].map(() => ({ ...config(path, "file"), lockTtl: "2 seconds" })),
          1
        )
        expect(report.errors).toEqual({})
        expect(fleet.invalidGrants).toBe(0)
        expect(duplicates(fleet.presented)).toEqual([])
        await loginSurvives(path)
      } finally {
        holder.signal("SIGKILL")
      }
    }
  )
})
