/** Mixed fleets: processes of both Effect lines (each on its built package) sharing one token cache. */
import { execFileSync, spawn } from "node:child_process"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..", "..", "..")
export const workers = {
  3: join(root, "packages", "service-sdk", "test", "mixedFleet", "worker-effect3.mjs"),
  4: join(import.meta.dirname, "fleet", "worker-effect4.mjs")
} as const

/** Builds both lines' packages (their sources only; incremental `tsc -b`: about a second when nothing changed). */
export const buildBoth = () => {
  const src = (...dir: ReadonlyArray<string>) => join(root, "packages", ...dir, "tsconfig.src.json")
  execFileSync(
    join(root, "node_modules", ".bin", "tsc"),
    ["-b", src("service-sdk"), src("redis"), src("effect4", "service-sdk"), src("effect4", "redis")],
    { stdio: "pipe" }
  )
}

export interface WorkerReport {
  readonly line: 3 | 4
  readonly calls: number
  readonly tokens: ReadonlyArray<string>
  readonly errors: ReadonlyArray<string>
}

/** Runs one worker of `line` to its end; its report. */
export const runWorker = (line: 3 | 4, config: Record<string, unknown>) =>
  new Promise<WorkerReport>((resolve, reject) => {
    const child = spawn(process.execPath, [workers[line], JSON.stringify(config)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk
    })
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk
    })
    child.on("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? ""
      try {
        if (code !== 0) throw new Error(`exit ${code}`)
        resolve(JSON.parse(last) as WorkerReport)
      } catch (error) {
        reject(new Error(`worker (Effect ${line}) failed: ${String(error)}\n${out}\n${err}`))
      }
    })
  })

/**
 * Runs two processes of each line for `durationMs` on one shared cache (`cache`: `{ path }` or `{ redisUrl, key }`)
 * against `emulator` (rotating refresh tokens, 2 s tokens), and checks what every mixed fleet must show: no caller
 * error (no invalid_grant), one refresh per expiry for the whole fleet, every process served renewed tokens.
 */
export const runMixedFleet = async (
  label: string,
  emulator: {
    readonly authUrl: string
    readonly clientId: string
    readonly clientSecret: string
    readonly stats: () => Promise<{ readonly tokenRequests: Record<string, number> }>
  },
  cache: Record<string, string>,
  expect: (
    value: unknown,
    message?: string
  ) => {
    toEqual: (other: unknown) => void
    toBeGreaterThan: (n: number) => void
    toBeGreaterThanOrEqual: (n: number) => void
    toBeLessThanOrEqual: (n: number) => void
  }
) => {
  const before = await emulator.stats()
  const durationMs = 7_000
  const config = {
    ...cache,
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
  const served = new Set(reports.flatMap((report) => report.tokens))
  console.info(
    `mixed fleet (${label}): ${refreshes} refreshes in ${durationMs / 1000} s, ${served.size} tokens served, calls: ${reports.map((r) => `E${r.line}=${r.calls}`).join(" ")}`
  )
  for (const report of reports) {
    expect(report.errors, `Effect ${report.line} worker errors`).toEqual([])
    expect(report.calls).toBeGreaterThan(10)
    // both lines took part: each process saw renewed tokens
    expect(report.tokens.length).toBeGreaterThanOrEqual(2)
  }
  // every token served was issued by one of the fleet's refreshes (or the sign-in): none was issued twice over
  expect(served.size).toBeLessThanOrEqual(refreshes + 1)
  // renewals once a second for the whole fleet: about durationMs / 1 s, never once per process
  expect(refreshes).toBeGreaterThanOrEqual(3)
  expect(refreshes).toBeLessThanOrEqual(Math.ceil(durationMs / 1000) + 3)
}
