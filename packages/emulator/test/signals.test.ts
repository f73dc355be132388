/**
 * Issue 21 item 10: Ctrl-C stops the built `service-sdk-emulator` at once, whenever it comes: during start-up, and
 * under load (keep-alive connections, requests arriving while the server closes). Waits are bounded.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Http from "node:http"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
// the shipped bin: the shim that runs dist/bin.js
const bin = Path.join(root, "packages/emulator/bin/service-sdk-emulator.js")

/** How long a stop may take: generous for a loaded 2-core machine, far below "ignored". */
const STOP_WITHIN_MS = 10_000

const start = (args: ReadonlyArray<string> = ["--port", "0"]) => {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
  const output = { stdout: "", stderr: "" }
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  return { child, output, exited }
}

/** Resolves with what `exited` gives, or with "hung" after `ms` (then the process is killed). */
const exitWithin = async (
  running: { child: ChildProcess; exited: Promise<{ code: number | null; signal: string | null }> },
  ms: number
) => {
  let timer: NodeJS.Timeout | undefined
  const result = await Promise.race([
    running.exited,
    new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), ms)
    })
  ])
  clearTimeout(timer)
  if (result === "hung") running.child.kill("SIGKILL")
  return result
}

const authUrlOf = async (output: { stdout: string }) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const match = /auth URL:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout)
    if (match !== null) return match[1]!
    if (Date.now() > deadline) throw new Error(`the emulator did not start: ${output.stdout}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("service-sdk-emulator and Ctrl-C", () => {
  beforeAll(() => {
    execFileSync(Path.join(root, "node_modules/.bin/tsc"), ["-b", "packages/emulator/tsconfig.src.json"], {
      cwd: root,
      stdio: "pipe"
    })
  }, 60_000)

  it("SIGINT during start-up stops it, whenever it comes", async () => {
    for (const delayMs of [0, 30, 80, 150, 250, 400, 700]) {
      const running = start()
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      running.child.kill("SIGINT")
      const exit = await exitWithin(running, STOP_WITHIN_MS)
      expect(exit, `SIGINT ${delayMs} ms after spawn`).not.toBe("hung")
      // a clean stop (0), or the default action of a signal that came before the handler was installed
      if (exit !== "hung") expect(exit.code === 0 || exit.signal === "SIGINT", JSON.stringify(exit)).toBe(true)
    }
  }, 120_000)

  it("SIGINT under load stops it: keep-alive connections, new connections and slow requests in flight", async () => {
    for (let round = 0; round < 4; round++) {
      const running = start()
      const authUrl = await authUrlOf(running.output)
      const { port } = new URL(authUrl)
      // a slow request in flight (a token fault that waits 60 s) and a stream of requests on both kinds of connection
      await fetch(`${authUrl}/__emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ target: "token", count: 1, delayMs: 60_000 })
      })
      const keepAlive = new Http.Agent({ keepAlive: true, maxSockets: 16 })
      let stopped = false
      const request = (agent: Http.Agent | false, path: string, method = "GET") =>
        new Promise<void>((resolve) => {
          const req = Http.request({ host: "127.0.0.1", port, path, method, agent }, (response) => {
            response.resume()
            response.on("end", resolve)
            response.on("error", () => resolve())
          })
          // no client timeout: a request the server never answers keeps its connection open, as a browser's would
          req.on("error", () => resolve())
          req.end()
        })
      void request(keepAlive, "/api/token", "POST")
      const loops = Array.from({ length: 24 }, async (_, index) => {
        while (!stopped) await request(index % 2 === 0 ? keepAlive : false, "/")
      })
      await new Promise((resolve) => setTimeout(resolve, 300 + round * 100))
      running.child.kill("SIGINT")
      const exit = await exitWithin(running, STOP_WITHIN_MS)
      stopped = true
      keepAlive.destroy()
      await Promise.all(loops)
      expect(exit, `round ${round}: ${running.output.stderr}`).toEqual({ code: 0, signal: null })
      expect(running.output.stdout).toContain("stopped")
    }
  }, 120_000)
})
