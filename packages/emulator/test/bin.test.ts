import { beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const bin = Path.join(root, "packages/emulator/dist/bin.js")

const run = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root })
  const output = { stdout: "", stderr: "" }
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  return { child, output, exited }
}

const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))
  ])

const waitFor = (output: { stdout: string }, pattern: RegExp, child: ChildProcessWithoutNullStreams) =>
  within(
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output.stdout)
        if (match !== null) {
          clearInterval(timer)
          resolve(match)
        }
      }
      const timer = setInterval(check, 20)
      child.on("exit", () => {
        clearInterval(timer)
        reject(new Error(`exited before printing ${pattern}: ${output.stdout}`))
      })
    }),
    10_000,
    `waiting for ${pattern}`
  )

describe("service-sdk-emulator bin", () => {
  beforeAll(() => {
    execFileSync(Path.join(root, "node_modules/.bin/tsc"), ["-b", "packages/emulator/tsconfig.src.json"], {
      cwd: root,
      stdio: "pipe"
    })
  }, 60_000)

  it("prints the URLs and credentials, serves, and exits cleanly on SIGINT", async () => {
    const { child, output, exited } = run([
      "--port",
      "0",
      "--auto-approve",
      "--token-lifetime",
      "90",
      "--refresh-token-lifetime",
      "15552000"
    ])
    try {
      const [, authUrl] = await waitFor(output, /auth URL:\s+(http:\/\/127\.0\.0\.1:\d+)/, child)
      const [, apiUrl] = await waitFor(output, /API URL:\s+(\S+)/, child)
      expect(apiUrl).toBe(`${authUrl}/v1`)
      expect(output.stdout).toContain("emulator-client")
      expect(output.stdout).toContain("emulator-secret")
      expect(output.stdout).toContain("public client: emulator-public-client")
      const token = await fetch(`${authUrl}/api/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&client_id=emulator-client&client_secret=emulator-secret"
      })
      expect(token.status).toBe(200)
      expect(((await token.json()) as { expires_in: number }).expires_in).toBe(90)
      const config = (await (await fetch(`${authUrl}/__emulator/config`)).json()) as { refreshTokenLifetime: number }
      expect(config.refreshTokenLifetime).toBe(15_552_000)
      const authorize = await fetch(
        `${authUrl}/authorize?response_type=code&client_id=emulator-client&redirect_uri=${encodeURIComponent("http://127.0.0.1:1/cb")}`,
        { redirect: "manual" }
      )
      expect(authorize.status).toBe(302)
      // one line per request on stderr: method, path without the query, status, ms; no secret, token or code
      const { access_token } = (await (
        await fetch(`${authUrl}/v1/albums/6akEvsycLGftJxYudPjmqK`, { headers: {} })
      ).json()) as { access_token?: string }
      expect(access_token).toBeUndefined()
      await within(
        new Promise<void>((resolve) => {
          const timer = setInterval(() => {
            if (output.stderr.includes("/v1/albums/")) resolve(clearInterval(timer))
          }, 20)
        }),
        10_000,
        "the request log line"
      )
      const lines = output.stderr.trim().split("\n")
      for (const line of lines) expect(line).toMatch(/^\d\d:\d\d:\d\d [A-Z]+ \/\S* \d{3} \d+ ms$/)
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/ POST \/api\/token 200 \d+ ms$/),
          expect.stringMatching(/ GET \/authorize 302 \d+ ms$/),
          expect.stringMatching(/ GET \/v1\/albums\/6akEvsycLGftJxYudPjmqK 401 \d+ ms$/)
        ])
      )
      expect(output.stderr).not.toMatch(/emulator-secret|redirect_uri|client_id/)
      child.kill("SIGINT")
      const exit = await within(exited, 10_000, "exit after SIGINT")
      expect(exit).toEqual({ code: 0, signal: null })
      expect(output.stdout).toContain("stopped")
      await expect(fetch(`${authUrl}/__emulator/stats`)).rejects.toThrow()
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("a taken --port fails with a clear message and exit code 2", async () => {
    const probe = run(["--port", "0"])
    try {
      const [, port] = await waitFor(probe.output, /auth URL:\s+http:\/\/127\.0\.0\.1:(\d+)/, probe.child)
      // the port is taken now: a second emulator on it fails with a clear message and exit code 2
      const second = run(["--port", port!])
      const exit = await within(second.exited, 10_000, "second emulator exit")
      expect(exit.code).toBe(2)
      expect(second.output.stderr).toContain(`Port ${port} is already in use`)
    } finally {
      probe.child.kill("SIGKILL")
    }
  })

  it("--quiet logs no request", async () => {
    const { child, output, exited } = run(["--port", "0", "--quiet"])
    try {
      const [, authUrl] = await waitFor(output, /auth URL:\s+(http:\/\/127\.0\.0\.1:\d+)/, child)
      expect((await fetch(`${authUrl}/v1/me`)).status).toBe(401)
      expect((await fetch(`${authUrl}/__emulator/stats`)).status).toBe(200)
      child.kill("SIGINT")
      expect((await within(exited, 10_000, "exit after SIGINT")).code).toBe(0)
      expect(output.stderr).toBe("")
      expect(output.stdout).toContain("--quiet")
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("bad arguments exit with code 2 and one error line with the next step; --help exits 0", async () => {
    const bad = run(["--port", "abc"])
    expect((await within(bad.exited, 10_000, "bad args exit")).code).toBe(2)
    expect(bad.output.stderr).toBe(
      "error: --port must be a non-negative integer, got abc\nRun `service-sdk-emulator --help` to see the options.\n"
    )
    const unknown = run(["--nope"])
    expect((await within(unknown.exited, 10_000, "unknown option exit")).code).toBe(2)
    const help = run(["--help"])
    expect((await within(help.exited, 10_000, "help exit")).code).toBe(0)
    expect(help.output.stdout).toContain("--auto-approve")
  })
})
