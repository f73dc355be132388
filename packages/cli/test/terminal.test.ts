/**
 * Issue 10, points 4 and 5 for the CLI: Ctrl-C exits 130, help is plain text when piped or with NO_COLOR, and text
 * from a server or a callback reaches the terminal without control characters.
 */
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import type { ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { colourEnabled, oneLine, plain, stripControl } from "../src/internal/terminal.js"
import { bin, buildBin, cleanEnv, type RunOptions, runProcess } from "./support/bin.js"
import { freePort } from "./support/chromium.js"

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
})

/** Runs `command` with `args`, its process killed after the test if still running. */
const run = (command: string, args: ReadonlyArray<string>, options: RunOptions = {}) =>
  runProcess(command, args, { ...options, onSpawn: (child) => children.push(child) })

const cli = (args: ReadonlyArray<string>, options: RunOptions = {}) => run(process.execPath, [bin, ...args], options)

const ESC = "\u001b"

beforeAll(buildBin, 120_000)

describe("terminal text", () => {
  it("strips control characters, escape sequences and bidi overrides; colour only on a TTY without NO_COLOR", () => {
    const hostile = "evil\u001b[2J\u001b]0;title\u0007\u0000\u009b31m\u202eok\tend\nnext"
    expect(stripControl(hostile)).toBe("evil[2J]0;title31mok\tend\nnext")
    expect(oneLine(hostile)).toBe("evilok end next")
    expect(plain("\u001b[1mUSAGE\u001b[0m\n\u001b]8;;http://x\u0007link\u001b]8;;\u0007")).toBe("USAGE\nlink")
    expect(colourEnabled({}, true)).toBe(true)
    expect(colourEnabled({ NO_COLOR: "1" }, true)).toBe(false)
    expect(colourEnabled({ NO_COLOR: "" }, true)).toBe(true)
    expect(colourEnabled({}, false)).toBe(false)
    expect(colourEnabled({}, undefined)).toBe(false)
  })
})

describe("service-sdk CLI in a terminal and a pipe", () => {
  it("--help piped is plain text, with or without NO_COLOR", async () => {
    for (const env of [cleanEnv(), cleanEnv({ NO_COLOR: "1" })]) {
      const result = await cli(["--help"], { env })
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("service-sdk")
      expect(result.stdout).not.toContain(ESC)
    }
  })

  it.skipIf(!existsSync("/usr/bin/script"))("--help on a terminal has colour, and none with NO_COLOR=1", async () => {
    const onTty = (env: Record<string, string>) =>
      run("/usr/bin/script", ["-qec", `${process.execPath} ${bin} --help`, "/dev/null"], { env })
    const coloured = await onTty(cleanEnv({ TERM: "xterm" }))
    expect(coloured.stdout).toContain("service-sdk")
    expect(coloured.stdout).toContain(ESC)
    const noColour = await onTty(cleanEnv({ TERM: "xterm", NO_COLOR: "1" }))
    expect(noColour.stdout).toContain("service-sdk")
    expect(noColour.stdout).not.toContain(ESC)
  })

  it("Ctrl-C during login exits 130; a forged callback without the state is answered 400 and ignored", async () => {
    const port = await freePort()
    let forged: Promise<number> | undefined
    const result = await cli(
      [
        "login",
        "--emulator",
        "--no-browser",
        "--port",
        String(port),
        "--cache",
        join(mkdtempSync(join(tmpdir(), "cli-")), "t.json")
      ],
      {
        onStdout: (text, child) => {
          if (forged === undefined && text.includes("/authorize?")) {
            forged = fetch(
              `http://127.0.0.1:${port}/callback?error=access_denied&error_description=${encodeURIComponent("\u001b[2Jforged")}`
            ).then(async (response) => {
              const status = response.status
              await new Promise((resolve) => setTimeout(resolve, 300))
              child.kill("SIGINT")
              return status
            })
          }
        }
      }
    )
    expect(await forged).toBe(400)
    expect(result.code).toBe(130)
    expect(result.stderr).not.toContain("forged")
  })

  it("Ctrl-C during token (a token endpoint that never answers) exits 130", async () => {
    // Ctrl-C once the token request is in flight (on a loaded machine the bin may take seconds to start)
    let connected: () => void = () => {}
    const inFlight = new Promise<void>((resolve) => {
      connected = resolve
    })
    const server = Net.createServer(() => connected())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      const running = cli(["token", "--auth-url", `http://127.0.0.1:${port}`], {
        env: cleanEnv({ SERVICE_SDK_CLIENT_ID: "id", SERVICE_SDK_CLIENT_SECRET: "secret" })
      })
      await inFlight
      children.at(-1)!.kill("SIGINT")
      const result = await running
      expect(result.code).toBe(130)
    } finally {
      server.close()
    }
  }, 40_000)

  it("an error callback's description is printed without control characters", async () => {
    const port = await freePort()
    let sent = false
    const result = await cli(
      [
        "login",
        "--emulator",
        "--no-browser",
        "--port",
        String(port),
        "--cache",
        join(mkdtempSync(join(tmpdir(), "cli-")), "t.json")
      ],
      {
        onStdout: (text) => {
          const url = text.match(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/)?.[0]
          if (url === undefined || sent) return
          sent = true
          const state = new URL(url).searchParams.get("state") ?? ""
          const description = "\u001b[2J\u001b]0;pwned\u0007evil\u009b31m\u202edone"
          void fetch(
            `http://127.0.0.1:${port}/callback?${new URLSearchParams({ error: "access_denied", error_description: description, state })}`
          )
        }
      }
    )
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("evil")
    expect(result.stderr).toContain("access_denied")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
    expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/)
  })
})
