/**
 * The failover tests' world: a Redis topology of real processes (Cluster or Sentinel, `../../support/topology.ts`),
 * the emulator rotating refresh tokens, users signed in, and a fleet of web-app-like OS processes
 * (`failoverWorker.mjs`, the README's client recipe, `UserTokens` over a `RedisTokenStore`) whose calls, errors,
 * longest calls and wrong-user tokens are counted.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { appendFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Emulator } from "@service-sdk/emulator"
import { RedisTokenStore } from "@service-sdk/redis"
import { scaled } from "../../support/load.js"
import { waitForExit } from "./fleet.js"

export interface FailoverConfig {
  readonly topology:
    | { readonly kind: "cluster"; readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }> }
    | {
        readonly kind: "sentinel"
        readonly sentinels: ReadonlyArray<{ readonly host: string; readonly port: number }>
        readonly name: string
      }
  readonly prefix: string
  readonly users: ReadonlyArray<string>
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly callers: number
  readonly pauseMs: number
  readonly skew: string
  readonly lockTtl: string
  readonly commandTimeout: string
}

export interface FailoverReport {
  readonly calls: number
  readonly errors: Readonly<Record<string, number>>
  /** a few error messages (never a token) */
  readonly messages: ReadonlyArray<string>
  /** a few calls longer than a second */
  readonly slow: ReadonlyArray<{ readonly ms: number; readonly at: number; readonly userId: string }>
  readonly maxMs: number
  /** epoch ms of the longest call's end */
  readonly maxAt: number
  readonly wrongUser: number
  readonly verified: number
  readonly unverified: number
  /** the token endpoint's `invalid_grant` answers (a rotated-out refresh token presented) */
  readonly invalidGrants: number
}

/**
 * What runs a worker process: a Node binary and a worker script speaking the protocol of `failoverWorker.mjs` (or of
 * `faultWorker.mjs`). The Effect 4 line's suites pass their own scripts, and the machine's Node for Effect 3 ones.
 */
export interface WorkerRunner {
  readonly node: string
  readonly script: string
}

/** The Effect 3 line's failover worker, on this process' Node. */
export const effect3FailoverWorker: WorkerRunner = {
  node: process.execPath,
  script: fileURLToPath(new URL("./failoverWorker.mjs", import.meta.url))
}

/**
 * `SERVICE_SDK_FAILOVER_LOG=<file>`: the workers log at debug level (what their SDK says, never a token) and their
 * lines are appended to this file, each after the worker's pid.
 */
const WORKER_LOG = process.env.SERVICE_SDK_FAILOVER_LOG || undefined

export class FailoverWorker {
  private waiting: Array<(report: FailoverReport) => void> = []
  stderr = ""
  private constructor(readonly child: ChildProcess) {}

  static start(config: FailoverConfig, runner: WorkerRunner = effect3FailoverWorker): Promise<FailoverWorker> {
    const child = spawn(runner.node, [runner.script, JSON.stringify(config)], { stdio: ["pipe", "pipe", "pipe"] })
    const worker = new FailoverWorker(child)
    const wait = scaled(30_000)
    return new Promise((resolve, reject) => {
      let buffer = ""
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`worker not ready within ${wait / 1000} s: ${worker.stderr}`))
      }, wait)
      child.stderr?.on("data", (chunk) => {
        worker.stderr = (worker.stderr + String(chunk)).slice(-4000)
      })
      child.once("exit", (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`worker exited (${code ?? signal}): ${worker.stderr}`))
      })
      child.stdout?.on("data", (chunk) => {
        buffer += String(chunk)
        let newline = buffer.indexOf("\n")
        while (newline >= 0) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          newline = buffer.indexOf("\n")
          let event: { event: string }
          try {
            event = JSON.parse(line)
          } catch {
            // a log line of the worker's (never a token): kept when asked, for a failure's post-mortem
            if (WORKER_LOG !== undefined) appendFileSync(WORKER_LOG, `${child.pid} ${line}\n`)
            continue
          }
          if (event.event === "ready") {
            clearTimeout(timer)
            resolve(worker)
          } else if (event.event === "report") FailoverWorker.deliver(worker, event as unknown as FailoverReport)
        }
      })
    })
  }

  private static deliver(worker: FailoverWorker, report: FailoverReport) {
    worker.waiting.shift()?.(report)
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** Counts since the last report. */
  report(): Promise<FailoverReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no report within 15 s: ${this.stderr}`)), 15_000)
      this.waiting.push((report) => {
        clearTimeout(timer)
        resolve(report)
      })
      this.child.stdin?.write("report\n")
    })
  }

  /** Lets the callers finish their calls, then resolves to the last report. */
  async stop(): Promise<FailoverReport | undefined> {
    if (!this.alive) return undefined
    const last = new Promise<FailoverReport | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 20_000)
      this.waiting.push((report) => {
        clearTimeout(timer)
        resolve(report)
      })
    })
    this.child.stdin?.write("stop\n")
    const report = await last
    await waitForExit(this.child, 5000)
    if (this.alive) {
      this.child.kill("SIGKILL")
      await waitForExit(this.child, 5000)
    }
    return report
  }
}

/** Reports merged: sums, the longest call, all wrong-user tokens. */
export const merge = (reports: ReadonlyArray<FailoverReport | undefined>): FailoverReport => {
  const present = reports.filter((report): report is FailoverReport => report !== undefined)
  const errors: Record<string, number> = {}
  for (const report of present) {
    for (const [tag, count] of Object.entries(report.errors)) errors[tag] = (errors[tag] ?? 0) + count
  }
  const longest = present.reduce((a, b) => (b.maxMs > a.maxMs ? b : a), present[0] ?? ({ maxMs: 0, maxAt: 0 } as never))
  const sum = (field: "calls" | "wrongUser" | "verified" | "unverified" | "invalidGrants") =>
    present.reduce((total, report) => total + report[field], 0)
  return {
    calls: sum("calls"),
    errors,
    messages: [...new Set(present.flatMap((report) => report.messages))],
    slow: present.flatMap((report) => report.slow),
    maxMs: longest.maxMs,
    maxAt: longest.maxAt,
    wrongUser: sum("wrongUser"),
    verified: sum("verified"),
    unverified: sum("unverified"),
    invalidGrants: sum("invalidGrants")
  }
}

export type EmulatorHandle = Awaited<ReturnType<typeof Emulator.start>>

/** Signs `count` users in at the emulator; their entries (as a web app's callback stores them) for the store. */
export const signInUsers = async (
  emulator: EmulatorHandle,
  prefix: string,
  count: number
): Promise<ReadonlyArray<{ readonly userId: string; readonly key: string; readonly entry: string }>> =>
  Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const userId = `user-${index}`
      // staggered first lifetimes: the users' renewals spread over time, as in a real app
      const tokens = await emulator.signIn({ userId, expiresIn: 2 + (index % 3) })
      const now = Date.now() / 1000
      const entry = JSON.stringify({
        access_token: tokens.access_token,
        expires_at: now + tokens.expires_in,
        issued_at: now,
        refresh_token: tokens.refresh_token,
        scope: tokens.scope
      })
      return { userId, key: RedisTokenStore.userKey(prefix, userId), entry }
    })
  )

/**
 * Whether the authorization server still accepts a stored entry's refresh token (a refresh grant; with rotation this
 * uses it up, so only at the end). "lost" when the entry is gone, has no refresh token, or is marked rejected.
 */
export const refreshAccepted = async (
  emulator: EmulatorHandle,
  entry: string | null
): Promise<"accepted" | "lost" | "rejected"> => {
  if (entry === null) return "lost"
  const parsed = JSON.parse(entry) as { refresh_token?: string; refresh_rejected?: boolean }
  if (typeof parsed.refresh_token !== "string" || parsed.refresh_rejected === true) return "lost"
  const basic = Buffer.from(`${emulator.clientId}:${emulator.clientSecret}`).toString("base64")
  const response = await fetch(`${emulator.authUrl}/api/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: parsed.refresh_token }).toString()
  })
  await response.body?.cancel()
  return response.status === 200 ? "accepted" : "rejected"
}
