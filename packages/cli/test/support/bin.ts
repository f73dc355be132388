/**
 * Running the built `service-sdk` bin (the shim that runs the bundle) from tests, with bounded waits.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"

export const root = join(import.meta.dirname, "..", "..", "..", "..")
/** the shipped bin: the shim that runs the bundle */
export const bin = join(root, "packages", "cli", "bin", "service-sdk.js")

/** Type-checks and builds the CLI, then bundles it (what the bin runs). */
export const buildBin = (): void => {
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b", join(root, "packages", "cli")], { stdio: "inherit" })
  execFileSync(process.execPath, [join(root, "packages", "cli", "scripts", "bundle.mjs")], { stdio: "inherit" })
}

/** The environment without the SDK's variables and NO_COLOR, plus `extra`, so tests do not depend on the machine. */
export const cleanEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("SERVICE_SDK_") && name !== "NO_COLOR" && value !== undefined) env[name] = value
  }
  return { ...env, ...extra }
}

export interface Result {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly env?: Record<string, string>
  readonly timeoutMs?: number
  readonly cwd?: string
  /** the process, as soon as it is spawned (to signal it) */
  readonly onSpawn?: (child: ChildProcess) => void
  /** sees the output so far as it comes (to act on a printed URL) */
  readonly onStdout?: (text: string, child: ChildProcess) => void
}

/** Runs `command args`; fails after `timeoutMs` (default 30 s), killing the process. */
export const runProcess = (command: string, args: ReadonlyArray<string>, options: RunOptions = {}) =>
  new Promise<Result>((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env ?? cleanEnv(),
      cwd: options.cwd,
      stdio: ["ignore", "pipe", "pipe"]
    })
    options.onSpawn?.(child)
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`timed out: ${command} ${args.join(" ")}\n${stdout}\n${stderr}`))
    }, options.timeoutMs ?? 30_000)
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      options.onStdout?.(stdout, child)
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

/** Runs the built `service-sdk` bin. */
export const cli = (args: ReadonlyArray<string>, options: RunOptions = {}) =>
  runProcess(process.execPath, [bin, ...args], options)

/** Visits the first authorization URL the bin prints (an emulator with autoApprove answers at once). */
export const approveFirstUrl = (): ((text: string) => void) => {
  let visited = false
  return (text) => {
    const url = text.match(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/)?.[0]
    if (url === undefined || visited) return
    visited = true
    void fetch(url, { redirect: "follow" })
      .then((response) => response.text())
      .catch(() => {})
  }
}

export { freePortArg } from "./ports.js"

/** The options that point the CLI at a running emulator with its confidential client. */
export const connectionArgs = (emulator: {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
}): ReadonlyArray<string> => [
  "--auth-url",
  emulator.authUrl,
  "--api-url",
  emulator.apiUrl,
  "--client-id",
  emulator.clientId,
  "--client-secret",
  emulator.clientSecret
]
