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
