/**
 * Real OS processes sharing a token file or directory (`worker.mjs`, on the built packages): start them, let them
 * call, collect what they saw (refresh tokens presented, `invalid_grant` answers, caller errors, served tokens).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

const root = fileURLToPath(new URL("../../../../", import.meta.url))
const script = join(root, "packages", "service-sdk", "build", "shared-worker", "worker.mjs")

/**
 * Builds the packages the workers import (`tsc -b` is incremental: about a second when nothing changed), then the
 * worker as one bundle (esbuild, as the CLI's bin): a process loads one file instead of hundreds of modules, so it
 * starts in a fraction of the time on a loaded machine.
 */
export const buildPackages = (): void => {
  try {
    execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b", join(root, "packages", "service-sdk")], {
      stdio: "pipe"
    })
  } catch (error) {
    // type errors elsewhere still emit JavaScript; the workers fail loudly if what they need is missing
    console.warn(`tsc -b reported errors: ${String((error as { stdout?: unknown }).stdout ?? error)}`)
  }
  execFileSync(
    join(root, "node_modules", ".bin", "esbuild"),
    [
      fileURLToPath(new URL("./worker.mjs", import.meta.url)),
      "--bundle",
      "--platform=node",
      "--format=esm",
      "--log-level=warning",
      // bundled CommonJS dependencies (undici) call require(): give the bundle one
      "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      `--outfile=${script}`
    ],
    { stdio: "pipe", cwd: root }
  )
}

export interface WorkerConfig {
  readonly mode: "file" | "handWritten" | "casOnly" | "holdLock" | "users"
  readonly path: string
  readonly authUrl: string
  readonly apiUrl?: string
  readonly clientId: string
  readonly clientSecret: string
  readonly callers?: number
  readonly pauseMs?: number
  readonly skew?: string
  readonly lockTtl?: string
  readonly users?: ReadonlyArray<string>
}

export interface Report {
  readonly calls: number
  readonly errors: Readonly<Record<string, number>>
  readonly maxMs: number
  readonly tokens: ReadonlyArray<string>
  readonly byUser: Readonly<
    Record<string, { errors: number; maxMs: number; medianMs: number; messages: ReadonlyArray<string> }>
  >
  /** mode "users": every user's calls, failed or not */
  readonly callsByUser?: Readonly<Record<string, number>>
}

/** One worker process and what it said. */
export class Worker {
  /** Hashes of the refresh tokens it presented, in order. */
  readonly presented: Array<string> = []
  invalidGrants = 0
  locked = false
  paused = false
  readonly events: Array<Record<string, unknown>> = []
  stderr = ""
  private reports: Array<Report> = []
  private waiting: Array<(report: Report) => void> = []

  private constructor(readonly child: ChildProcess) {}

  /** Starts a worker; resolves once it is ready (a start-up wait that scales: up to 60 s on a loaded machine). */
  static start(config: WorkerConfig): Promise<Worker> {
    const full = { callers: 10, pauseMs: 20, skew: "1 second", ...config }
    const child = spawn(process.execPath, [script, JSON.stringify(full)], { stdio: ["pipe", "pipe", "pipe"] })
    const worker = new Worker(child)
    return new Promise((resolve, reject) => {
      let buffer = ""
      const timer = setTimeout(() => reject(new Error(`worker not ready within 60 s: ${worker.stderr}`)), 60_000)
      child.stderr?.on("data", (chunk) => {
        worker.stderr += String(chunk)
      })
      child.once("exit", (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`worker exited (${code ?? signal}): ${worker.stderr}`))
      })
      child.stdout?.on("data", (chunk) => {
        buffer += String(chunk)
        for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          let event: Record<string, unknown>
          try {
            event = JSON.parse(line)
          } catch {
            continue
          }
          if (event.event === "ready") {
            clearTimeout(timer)
            resolve(worker)
          } else if (event.event === "refresh") worker.presented.push(String(event.rt))
          else if (event.event === "invalid_grant") worker.invalidGrants++
          else if (event.event === "locked") worker.locked = true
          else if (event.event === "paused") worker.paused = true
          else if (event.event === "report") {
            const waiter = worker.waiting.shift()
            if (waiter !== undefined) waiter(event as unknown as Report)
            else worker.reports.push(event as unknown as Report)
          } else worker.events.push(event)
        }
      })
    })
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  send(command: string): void {
    if (this.alive) this.child.stdin?.write(`${command}\n`)
  }

  /** Counts since the last report. */
  report(): Promise<Report> {
    return new Promise((resolve, reject) => {
      const queued = this.reports.shift()
      if (queued !== undefined) return resolve(queued)
      const timer = setTimeout(() => reject(new Error(`no report within 20 s: ${this.stderr}`)), 20_000)
      this.waiting.push((report) => {
        clearTimeout(timer)
        resolve(report)
      })
      this.send("report")
    })
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal)
  }

  /** A last report, then the process ends (killed if it does not within 10 s). */
  async stop(): Promise<void> {
    if (!this.alive) return
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()))
    this.send("stop")
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000)
    await exited
    clearTimeout(timer)
  }
}

/** Several workers, started together. */
export class Fleet {
  private constructor(readonly workers: ReadonlyArray<Worker>) {}

  static async start(configs: ReadonlyArray<WorkerConfig>): Promise<Fleet> {
    const settled = await Promise.allSettled(configs.map((config) => Worker.start(config)))
    const workers = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []))
    const failed = settled.find((result) => result.status === "rejected")
    if (failed !== undefined) {
      await Promise.all(workers.map((worker) => worker.stop()))
      throw (failed as PromiseRejectedResult).reason
    }
    return new Fleet(workers)
  }

  go(): void {
    for (const worker of this.workers) worker.send("go")
  }

  /** Lets every call under way finish (a renewal stopped half-way would lose its rotated refresh token). */
  async pause(): Promise<void> {
    for (const worker of this.workers) {
      worker.paused = false
      worker.send("pause")
    }
    const end = Date.now() + 30_000
    while (this.workers.some((worker) => worker.alive && !worker.paused) && Date.now() < end) await sleep(20)
  }

  /** Every refresh token presented by any worker. */
  get presented(): ReadonlyArray<string> {
    return this.workers.flatMap((worker) => worker.presented)
  }

  get invalidGrants(): number {
    return this.workers.reduce((sum, worker) => sum + worker.invalidGrants, 0)
  }

  /** The workers' reports, merged. */
  async report(): Promise<Report> {
    return Fleet.merge(await Promise.all(this.workers.map((worker) => worker.report())))
  }

  /** Reports merged: counts summed, the slowest figures kept (calls per user summed too). */
  static merge(reports: ReadonlyArray<Report>): Report {
    const errors: Record<string, number> = {}
    const byUser: Record<string, { errors: number; maxMs: number; medianMs: number; messages: Array<string> }> = {}
    for (const report of reports) {
      for (const [tag, count] of Object.entries(report.errors)) errors[tag] = (errors[tag] ?? 0) + count
      for (const [user, entry] of Object.entries(report.byUser)) {
        const merged = byUser[user] ?? { errors: 0, maxMs: 0, medianMs: 0, messages: [] }
        byUser[user] = merged
        merged.errors += entry.errors
        merged.maxMs = Math.max(merged.maxMs, entry.maxMs)
        merged.medianMs = Math.max(merged.medianMs, entry.medianMs)
        merged.messages.push(...entry.messages)
      }
    }
    const callsByUser: Record<string, number> = {}
    for (const report of reports) {
      for (const [user, calls] of Object.entries(report.callsByUser ?? {})) {
        callsByUser[user] = (callsByUser[user] ?? 0) + calls
      }
    }
    return {
      calls: reports.reduce((sum, report) => sum + report.calls, 0),
      errors,
      maxMs: Math.max(0, ...reports.map((report) => report.maxMs)),
      tokens: [...new Set(reports.flatMap((report) => report.tokens))],
      byUser,
      callsByUser
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.stop()))
  }
}

/** Hashes that occur more than once. */
export const duplicates = (values: ReadonlyArray<string>): ReadonlyArray<string> =>
  values.filter((value, index) => values.indexOf(value) !== index)
