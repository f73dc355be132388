/**
 * Two web-app-worker-like processes (UserTokens in each) over one TokenStore.directory, against the emulator
 * rotating refresh tokens: 50 users, 3 expiries. What the contract promises: no refresh token presented twice (one
 * refresh per user per expiry), no invalid_grant, nobody served another user's token (the API says whose token it
 * is), and a sign-out in one worker is not undone by the other, whose calls for that user then fail fast.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Emulator } from "@service-sdk/emulator"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { TokenCache, TokenInfo, TokenStore } from "@service-sdk/effect"
import { buildPackages, duplicates, Fleet, sleep, type WorkerConfig } from "../shared/processes.js"

const LIFETIME_S = 3
const SKEW = "1 second"
const USERS = Array.from({ length: 50 }, (_, i) => `user-${i}`)

let emulator: Awaited<ReturnType<typeof Emulator.start>>
let dir: string
beforeAll(async () => {
  buildPackages()
  emulator = await Emulator.start({ rotateRefreshTokens: true, tokenLifetime: LIFETIME_S })
  dir = mkdtempSync(join(tmpdir(), "shared-store-"))
}, 120_000)
afterAll(async () => {
  await emulator?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("one TokenStore.directory shared by two worker processes (UserTokens)", () => {
  it.live(
    "50 users, 3 expiries: one refresh per user per expiry, nobody served another's token; a sign-out sticks",
    () =>
      Effect.promise(async () => {
        // every user signed in, their access tokens already stale (the first expiry is at once)
        for (const userId of USERS) {
          const tokens = await emulator.signIn({ userId, expiresIn: 1 })
          const entry = new TokenInfo({
            accessToken: Redacted.make(tokens.access_token),
            expiresAt: Date.now() / 1000 + 1,
            refreshToken: Redacted.make(tokens.refresh_token)
          })
          writeFileSync(join(dir, TokenStore.fileName(userId)), TokenCache.encodeJson(entry), { mode: 0o600 })
        }
        const config: WorkerConfig = {
          mode: "users",
          path: dir,
          authUrl: emulator.authUrl,
          apiUrl: emulator.apiUrl,
          clientId: emulator.clientId,
          clientSecret: emulator.clientSecret,
          users: USERS,
          pauseMs: 100,
          skew: SKEW
        }
        const fleet = await Fleet.start([config, config])
        try {
          fleet.go()
          // 3 expiries of every user: 150 refresh tokens presented
          const end = Date.now() + 60_000
          while (fleet.presented.length < 3 * USERS.length && Date.now() < end) await sleep(100)
          await fleet.pause()
          const report = await fleet.report()
          expect(report.errors).toEqual({})
          expect(fleet.invalidGrants).toBe(0)
          expect(duplicates(fleet.presented)).toEqual([])
          expect(fleet.presented.length).toBeGreaterThanOrEqual(3 * USERS.length)
          const byUser = await emulator.apiRequestsByUser()
          expect(Object.keys(byUser).sort()).toEqual([...USERS].sort())

          // worker 0 signs user-7 out while worker 1 keeps calling for it, renewals included
          const [first, second] = fleet.workers
          const signedOut = "user-7"
          fleet.go()
          await sleep(LIFETIME_S * 1000)
          first!.send(`signOut ${signedOut}`)
          const done = Date.now() + 20_000
          while (!first!.events.some((event) => event.event === "signedOut") && Date.now() < done) await sleep(20)
          expect(first!.events.find((event) => event.event === "signedOut")).toEqual({
            event: "signedOut",
            userId: signedOut
          })
          await second!.report()
          // a whole token lifetime later (every other user renewed again), user-7's entry is still gone
          await sleep(LIFETIME_S * 1000 + 500)
          await fleet.pause()
          // worker 1's report covers only this window (it reported just after the sign-out)
          const reports = await Promise.all(fleet.workers.map((worker) => worker.report()))
          const after = Fleet.merge(reports)
          expect(existsSync(join(dir, TokenStore.fileName(signedOut)))).toBe(false)
          const user = after.byUser[signedOut]
          expect(user?.errors).toBeGreaterThan(0)
          expect(user?.messages.every((message) => message.startsWith("not signed in"))).toBe(true)
          // fails fast (issue 21.5): no 2.25 s wait per call for a renewal that might bring the entry back. Counted,
          // not timed: each user's caller calls, pauses 100 ms and calls again, so in this window worker 1 called
          // for user-7 about as often as for the others (measured: 12-18 calls against a median of 21-26), where a
          // 2.25 s wait per failed call allows 2 (measured with that wait put into the worker: 2 against 22); a
          // loaded machine slows every user's caller alike
          const calls = reports[1]?.callsByUser ?? {}
          const others = USERS.filter((id) => id !== signedOut)
            .map((id) => calls[id] ?? 0)
            .sort((a, b) => a - b)
          const median = others[Math.floor(others.length / 2)]!
          expect(median).toBeGreaterThan(0)
          expect(
            calls[signedOut] ?? 0,
            `calls for ${signedOut} against the others' median ${median}`
          ).toBeGreaterThanOrEqual(median / 4)
          expect(Object.keys(after.byUser)).toEqual([signedOut])
          expect(fleet.invalidGrants).toBe(0)
          expect(duplicates(fleet.presented)).toEqual([])
        } finally {
          await fleet.stop()
        }
      }),
    120_000
  )
})
