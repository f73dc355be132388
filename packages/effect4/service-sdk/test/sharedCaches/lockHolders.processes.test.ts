/**
 * The file lock with real OS processes (DESIGN section 6): a holder killed (SIGKILL) while it holds the lock file is
 * taken over at once; a frozen holder (SIGSTOP) loses it after its TTL without a heartbeat; a live holder keeps it,
 * whatever TTL its waiters have.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { TokenCache } from "@service-sdk/effect"
import { beforeAll, describe, expect, it } from "vitest"
import { buildBoth } from "../support/fleet.js"

const lockHolder = join(import.meta.dirname, "..", "support", "fleet", "lock-holder.mjs")

/** A process that takes the lock of `path` and holds it forever (ttl `ttl`), once it printed "held". */
const holder = async (path: string, ttl: string) => {
  const child = spawn(process.execPath, [lockHolder, path, ttl], { stdio: ["ignore", "pipe", "pipe"] })
  await new Promise<void>((resolve, reject) => {
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk
      if (output.includes("held")) resolve()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk
    })
    child.on("exit", (exit) => reject(new Error(`the holder exited (${exit}): ${output}`)))
  })
  return child
}

/** Takes the lock of `path` with lock TTL `ttl` (a waiter honours the TTL its holder wrote, up to 5 minutes). */
const lockFor = (path: string, wait: Duration.Input, ttl: Duration.Input) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const cache = yield* TokenCache.file(path, { lockWait: wait, lockTtl: ttl })
      const started = Date.now()
      yield* cache.withLock!(Effect.void)
      return Date.now() - started
    })
  )

beforeAll(() => buildBoth(), 120_000)

describe("the lock file with real processes", () => {
  it("a holder killed while it holds the lock is taken over at once (no TTL wait)", { timeout: 60_000 }, async () => {
    const path = join(mkdtempSync(join(tmpdir(), "e4-lock-")), "token.json")
    const child = await holder(path, "60 seconds")
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8")).pid).toBe(child.pid)
    // alive: the lock is not taken
    await expect(lockFor(path, "300 millis", "60 seconds")).rejects.toThrow(/gave up waiting/)
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))
    const waited = await lockFor(path, "20 seconds", "60 seconds")
    expect(waited).toBeLessThan(15_000)
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it("a live holder with a longer TTL than ours keeps its lock; frozen, it loses it after its TTL, not ours (DESIGN section 9)", {
    timeout: 60_000
  }, async () => {
    const path = join(mkdtempSync(join(tmpdir(), "e4-lock-")), "token.json")
    const child = await holder(path, "3 seconds")
    try {
      // a waiter with a shorter lockTtl honours the holder's: the live holder is not taken over
      await expect(lockFor(path, "1500 millis", "500 millis")).rejects.toThrow(/gave up waiting/)
      child.kill("SIGSTOP")
      const waited = await lockFor(path, "20 seconds", "500 millis")
      // its last heartbeat was at most 1 s before the stop: the holder's 3 s TTL, not our 0.5 s, was waited for
      expect(waited).toBeGreaterThanOrEqual(1500)
      expect(waited).toBeLessThan(15_000)
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("a frozen holder (SIGSTOP) loses the lock after its TTL; a live one keeps it past its TTL", {
    timeout: 60_000
  }, async () => {
    const path = join(mkdtempSync(join(tmpdir(), "e4-lock-")), "token.json")
    const child = await holder(path, "1 second")
    try {
      // the heartbeat keeps it past its TTL
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      await expect(lockFor(path, "200 millis", "1 second")).rejects.toThrow(/gave up waiting/)
      child.kill("SIGSTOP")
      const waited = await lockFor(path, "20 seconds", "1 second")
      expect(waited).toBeLessThan(15_000)
    } finally {
      child.kill("SIGKILL")
    }
  })
})
