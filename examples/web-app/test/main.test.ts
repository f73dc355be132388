import { beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Net from "node:net"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")
const example = join(root, "examples", "web-app")

beforeAll(() => {
  // `npm run example:web` runs the built app: make sure dist is current (tsc -b is incremental and fast)
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-b", example], { stdio: "inherit" })
}, 120_000)

/** Starts `node dist/main.js` and resolves with the URL it prints. */
const start = (env: Record<string, string>) =>
  new Promise<{ readonly child: ChildProcess; readonly url: string; readonly output: () => string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [join(example, "dist", "main.js")], {
        env: { PATH: process.env.PATH ?? "", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`the app did not start:\n${output}`))
      }, 20_000)
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const match = /Web app: (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
        // the banner's last line: everything is printed and listening
        if (match !== null && output.includes("Press Ctrl+C")) {
          clearTimeout(timer)
          resolve({ child, url: match[1]!, output: () => output })
        }
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", onData)
      child.once("exit", (code) => {
        clearTimeout(timer)
        reject(new Error(`the app exited with ${code}:\n${output}`))
      })
    }
  )

const stop = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code))
    child.kill("SIGINT")
  })

describe("npm run example:web", () => {
  it("serves the app against the embedded emulator, and stops on Ctrl+C", async () => {
    const { child, url, output } = await start({ PORT: "0" })
    try {
      expect(output()).toContain("tokens and sessions in memory")
      expect(output()).toMatch(/Service: the embedded emulator at http:\/\/127\.0\.0\.1:\d+/)
      const home = await fetch(url)
      expect(home.status).toBe(200)
      expect(await home.text()).toContain("Sign in with the Service")
      // /login goes to the embedded emulator's consent page, which shows the #user field
      const login = await fetch(`${url}/login?login_hint=web-user`, { redirect: "manual" })
      expect(login.status).toBe(302)
      const consent = await fetch(login.headers.get("location")!)
      expect(consent.status).toBe(200)
      expect(await consent.text()).toContain('<input id="user" name="user" type="text" value="web-user"')
    } finally {
      await stop(child)
    }
  }, 60_000)

  /** Runs the app to its exit. */
  const runToExit = (env: Record<string, string>) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [join(example, "dist", "main.js")], {
        env: { PATH: process.env.PATH ?? "", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.once("exit", (code) => resolve({ code, output }))
    })

  it("a bad PORT is one clear line and a non-zero exit", async () => {
    const result = await runToExit({ PORT: "http" })
    expect(result.code).not.toBe(0)
    expect(result.output.trim()).toBe("web-app: PORT must be a port number, got http")
  }, 30_000)

  it("a PORT in use is one clear line and a non-zero exit", async () => {
    const taken = Net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as Net.AddressInfo).port
    try {
      const result = await runToExit({ PORT: String(port) })
      expect(result.code).not.toBe(0)
      expect(result.output.trim()).toBe(
        `web-app: port ${port} is already in use on 127.0.0.1 (set PORT to another port)`
      )
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  }, 30_000)
})
