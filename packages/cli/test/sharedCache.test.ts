/**
 * Six `service-sdk whoami --cache <file>` started at once on a stale token (a shell script, several terminals, cron
 * jobs), through the built bin, against the emulator rotating refresh tokens with a slow token endpoint: the token
 * file's lock makes one refresh for all six, every one of them succeeds, and the login survives.
 */
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connectionArgs } from "./support/bin.js"

const root = join(import.meta.dirname, "..", "..", "..")
const bin = join(root, "packages", "cli", "bin", "service-sdk.js")

const cleanEnv = () => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("SERVICE_SDK_") && value !== undefined) env[name] = value
  }
  return env
}

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`timed out: service-sdk ${args.join(" ")}\n${stdout}\n${stderr}`))
    }, 90_000)
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

let emulator: EmulatorHandle
let dir: string
beforeAll(async () => {
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b", join(root, "packages", "cli")], { stdio: "inherit" })
  execFileSync(process.execPath, [join(root, "packages", "cli", "scripts", "bundle.mjs")], { stdio: "inherit" })
  // The issue's run used 8 s tokens; here a renewed token stays fresh for 30 s (half its lifetime, the default skew),
  // longer than the six processes take to start on a loaded machine, so one refresh is the whole story.
  emulator = await Emulator.start({ rotateRefreshTokens: true, tokenLifetime: 60, tokenLatencyMs: 2500 })
  dir = mkdtempSync(join(tmpdir(), "service-sdk-cli-shared-"))
}, 120_000)
afterAll(async () => {
  await emulator?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("six whoami at once on one token file", () => {
  it("all six succeed with one refresh; the login survives", { timeout: 120_000 }, async () => {
    const cache = join(dir, "tokens.json")
    // a login whose access token is already stale
    const tokens = await emulator.signIn({ userId: "emulator-user", expiresIn: 1 })
    writeFileSync(
      cache,
      JSON.stringify({
        access_token: tokens.access_token,
        expires_at: Date.now() / 1000 - 1,
        refresh_token: tokens.refresh_token
      }),
      { mode: 0o600 }
    )
    const connection = connectionArgs(emulator)
    const before = (await emulator.stats()).tokenRequests.refresh_token
    const results = await Promise.all(Array.from({ length: 6 }, () => run(["whoami", ...connection, "--cache", cache])))
    for (const result of results) {
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("emulator-user")
    }
    expect((await emulator.stats()).tokenRequests.refresh_token - before).toBe(1)
    // the rotated refresh token reached the file: the next whoami after the next expiry works too
    const saved = JSON.parse(readFileSync(cache, "utf8")) as { refresh_token: string }
    expect(saved.refresh_token).not.toBe(tokens.refresh_token)
    const again = await fetch(`${emulator.authUrl}/api/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${emulator.clientId}:${emulator.clientSecret}`).toString("base64")}`
      },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: saved.refresh_token }).toString()
    })
    expect(again.status).toBe(200)
  })
})
