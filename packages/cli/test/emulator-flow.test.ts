/**
 * Issue 22 item 5: a newcomer's path through the built bin. `service-sdk emulator` in one terminal prints commands;
 * typed as printed in another terminal (a shell with `service-sdk` on its PATH and a browser that follows the
 * consent page), `token`, `login` and `whoami` work, as a confidential and as a public client, and nothing says
 * "missing credentials" or speaks the library's words.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bin, buildBin, cleanEnv, cli, runProcess } from "./support/bin.js"

beforeAll(buildBin, 120_000)

const LIBRARY_WORDS = /missing credentials|exchangeCode|no token:|FiberFailure|at .*\.js:\d+/

/** A home for the second terminal: `service-sdk` on the PATH, and an `xdg-open` that visits the URL like a browser. */
const terminal = () => {
  const home = mkdtempSync(join(tmpdir(), "cli-newcomer-"))
  const path = join(home, "bin")
  mkdirSync(path)
  symlinkSync(bin, join(path, "service-sdk"))
  writeFileSync(
    join(path, "xdg-open"),
    `#!/bin/sh\nexec "${process.execPath}" -e 'fetch(process.argv[1], { redirect: "follow" }).then((r) => r.text()).catch(() => process.exit(1))' "$1"\n`,
    { mode: 0o755 }
  )
  return cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, "config"), PATH: `${path}:${process.env.PATH ?? ""}` })
}

describe("service-sdk emulator, then the commands it prints", () => {
  let emulator: ChildProcess
  let banner = ""
  beforeAll(async () => {
    // the user's shell has the bin on its PATH, so the banner says `service-sdk` (without it: `npx service-sdk`)
    emulator = spawn(process.execPath, [bin, "emulator", "--port", "0", "--auto-approve"], {
      env: terminal(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    emulator.stdout!.on("data", (chunk: Buffer) => {
      banner += chunk.toString()
    })
    const deadline = Date.now() + 30_000
    while (!banner.includes(`--client-id emulator-public-client`)) {
      if (Date.now() > deadline || emulator.exitCode !== null) throw new Error(`the emulator did not start:\n${banner}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // the last line of the banner
    while (!/whoami\s*$/.test(banner) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  }, 40_000)
  afterAll(() => {
    emulator?.kill("SIGINT")
  })

  /** The indented lines after `title` up to the next blank line: the commands, as printed. */
  const block = (title: string) => {
    const lines = banner.split("\n")
    const start = lines.findIndex((line) => line.startsWith(title))
    expect(start, title).toBeGreaterThanOrEqual(0)
    const rest = lines.slice(start + 1)
    const end = rest.findIndex((line) => line.trim() === "")
    return (end === -1 ? rest : rest.slice(0, end)).map((line) => line.trim())
  }

  /** Runs `commands` in bash, one after another, stopping at the first failure; echoes each command first. */
  const type = (commands: ReadonlyArray<string>, env: Record<string, string>) =>
    runProcess(
      "bash",
      ["-ec", commands.map((command) => `echo "$ ${command.replace(/"/g, "")}"; ${command}`).join("\n")],
      {
        env,
        timeoutMs: 60_000
      }
    )

  it("confidential client: export, token, login, whoami, as printed", async () => {
    const commands = block("In another terminal:")
    expect(commands.filter((line) => line.startsWith("export "))).toHaveLength(2)
    expect(commands.filter((line) => line.startsWith("service-sdk "))).toEqual([
      "service-sdk token",
      "service-sdk login",
      "service-sdk whoami"
    ])
    const result = await type(commands, terminal())
    expect(result.stderr).not.toMatch(LIBRARY_WORDS)
    expect(result.stdout).not.toMatch(LIBRARY_WORDS)
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(result.stdout).toMatch(/\$ service-sdk token\naccess token \S+…\S+, expires in \d+ s/)
    expect(result.stdout).toMatch(/\$ service-sdk login\n(?:.*\n)*Logged in as emulator-user \(Emulator User\)/)
    expect(result.stdout).toMatch(/\$ service-sdk whoami\nLogged in as emulator-user \(Emulator User\)/)
  }, 90_000)

  it("public client: the same exports, then login --public-client and whoami, as printed", async () => {
    const exports = block("In another terminal:").filter((line) => line.startsWith("export "))
    const commands = block("Or as a public client")
    expect(commands).toEqual([
      "service-sdk login --public-client --client-id emulator-public-client",
      "service-sdk whoami"
    ])
    const result = await type([...exports, ...commands], terminal())
    expect(result.stderr).not.toMatch(LIBRARY_WORDS)
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(result.stdout).toContain(
      "Logged in as emulator-user (Emulator User) <emulator-user@example.com>, SE, premium (a public client: no secret)"
    )
    expect(result.stdout).toMatch(/\$ service-sdk whoami\nLogged in as emulator-user \(Emulator User\)/)
  }, 90_000)

  it("whoami before any login, or against another emulator, says what to do in CLI words", async () => {
    const exports = block("In another terminal:").filter((line) => line.startsWith("export "))
    const env = terminal()
    const before = await type([...exports, "service-sdk whoami"], env)
    expect(before.code).not.toBe(0)
    expect(before.stderr).toMatch(/^error: not signed in \(no saved login at .*\): run `service-sdk login` first$/m)
    expect(before.stderr).not.toMatch(LIBRARY_WORDS)
    const elsewhere = await type(
      [...exports, "service-sdk login", "service-sdk whoami --auth-url http://127.0.0.1:9"],
      env
    )
    expect(elsewhere.code).not.toBe(0)
    expect(elsewhere.stderr).toMatch(
      /the saved login at .* is for http:\/\/127\.0\.0\.1:\d+, not http:\/\/127\.0\.0\.1:9/
    )
    expect(elsewhere.stderr).not.toMatch(LIBRARY_WORDS)
  }, 90_000)
})

describe("--emulator (a throwaway emulator for one command)", () => {
  it("login --emulator says its login does not last and saves nothing; whoami --emulator says what to do", async () => {
    const env = terminal()
    const login = await cli(["login", "--emulator"], { env })
    expect(login.code, login.stderr).toBe(0)
    expect(login.stdout).toContain("not saved")
    expect(login.stdout).toContain("run `service-sdk emulator` in another terminal")
    const whoami = await cli(["whoami", "--emulator"], { env })
    expect(whoami.code).not.toBe(0)
    expect(whoami.stderr).toContain("Run `service-sdk emulator` in another terminal")
    expect(whoami.stderr).not.toMatch(LIBRARY_WORDS)
  }, 60_000)
})
