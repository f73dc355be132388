/**
 * Issue 21 items 6 and 7 (CLI part), through the built bin: `login` writes `<cache>.client.json` like the token cache
 * (exclusive temp file + rename, 0600, never through a planted link) in a directory no other user may write; `token`
 * never prints a token with control characters.
 */
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { directoryVerdict } from "../src/internal/login.js"
import {
  approveFirstUrl,
  bin,
  buildBin,
  cleanEnv,
  cli,
  connectionArgs,
  freePortArg,
  runProcess
} from "./support/bin.js"

beforeAll(buildBin, 120_000)

let emulator: EmulatorHandle
beforeAll(async () => {
  emulator = await Emulator.start({ autoApprove: true })
})
afterAll(async () => {
  await emulator?.close()
})

const connection = () => connectionArgs(emulator)

const login = async (cache: string) =>
  cli(["login", ...connection(), "--no-browser", "--port", await freePortArg(), "--cache", cache], {
    onStdout: approveFirstUrl()
  })

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/

describe("login's files", () => {
  it("<cache>.client.json replaces a planted symlink instead of writing through it; 0600, a plain file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-link-"))
    const victim = join(dir, "victim.txt")
    writeFileSync(victim, "do not touch\n", { mode: 0o644 })
    const cache = join(dir, "tokens.json")
    symlinkSync(victim, `${cache}.client.json`)
    const result = await login(cache)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(readFileSync(victim, "utf8")).toBe("do not touch\n")
    expect(statSync(victim).mode & 0o777).toBe(0o644)
    const saved = lstatSync(`${cache}.client.json`)
    expect(saved.isSymbolicLink()).toBe(false)
    expect(saved.isFile()).toBe(true)
    expect(saved.mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(`${cache}.client.json`, "utf8"))).toEqual({
      client_id: emulator.clientId,
      public_client: false,
      auth_url: emulator.authUrl,
      api_url: emulator.apiUrl
    })
    // no temp file left behind
    expect(readdirSync(dir).sort()).toEqual(["tokens.json", "tokens.json.client.json", "victim.txt"])
    // and whoami does not read a link either: a planted one is ignored (it would name the client)
    const whoami = await cli(["whoami", ...connection(), "--cache", cache])
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toContain("emulator-user")
  })

  it("an existing 0777 cache directory of ours is tightened to 0700, and says so", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "cli-open-")), "cache")
    mkdirSync(dir)
    chmodSync(dir, 0o777)
    const cache = join(dir, "tokens.json")
    const result = await login(cache)
    expect(result.code).toBe(0)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(result.stderr).toContain(`${dir} was writable by other users (mode 0777); it is now 0700`)
    expect(statSync(cache).mode & 0o777).toBe(0o600)
  })

  it("a shared (sticky, world-writable) directory is refused with a clear message; nothing is written", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "cli-shared-")), "shared")
    mkdirSync(dir)
    chmodSync(dir, 0o1777)
    const before = await emulator.stats()
    const result = await login(join(dir, "tokens.json"))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(`cannot use the token cache directory ${dir}`)
    expect(result.stderr).toContain("pass --cache")
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(statSync(dir).mode & 0o7777).toBe(0o1777)
    expect(readdirSync(dir)).toEqual([])
    // refused before any sign-in
    expect((await emulator.stats()).tokenRequests.total).toBe(before.tokenRequests.total)
  })

  it("directoryVerdict: ours and open → tighten; someone else's or sticky → refuse; closed → ok", () => {
    expect(directoryVerdict({ mode: 0o40700, uid: 1000 }, 1000)).toBe("ok")
    expect(directoryVerdict({ mode: 0o40755, uid: 0 }, 1000)).toBe("ok")
    expect(directoryVerdict({ mode: 0o40777, uid: 1000 }, 1000)).toBe("tighten")
    expect(directoryVerdict({ mode: 0o40770, uid: 1000 }, 1000)).toBe("tighten")
    expect(directoryVerdict({ mode: 0o40777, uid: 0 }, 1000)).toBe("refuse")
    expect(directoryVerdict({ mode: 0o41777, uid: 1000 }, 1000)).toBe("refuse")
  })
})

describe("token with control characters", () => {
  const hostile = "abc\u001b]0;pwned\u0007def\u001b[2J\r\nX-Injected: 1"
  const faultBody = JSON.stringify({ access_token: hostile, token_type: "Bearer", expires_in: 3600 })

  it("token --reveal prints nothing of it, piped", async () => {
    await emulator.injectFault({ target: "token", count: 1, status: 200, body: faultBody })
    const result = await cli(["token", ...connection(), "--reveal"])
    expect(result.code).not.toBe(0)
    expect(result.stdout).toBe("")
    expect(result.stderr).not.toMatch(CONTROL)
    expect(result.stderr).not.toContain("pwned")
    expect(result.stderr).not.toContain("X-Injected")
    expect(result.stderr).toMatch(/^error: .*(ASCII|malformed)/)
  })

  it("token --reveal prints nothing raw on a terminal (under script(1))", async () => {
    await emulator.injectFault({ target: "token", count: 1, status: 200, body: faultBody })
    const command = [process.execPath, bin, "token", ...connection(), "--reveal"]
      .map((arg) => `'${arg.replace(/'/g, "'\\''")}'`)
      .join(" ")
    const result = await runProcess("script", ["-qec", command, "/dev/null"], { env: cleanEnv() })
    expect(result.code).not.toBe(0)
    expect(result.stdout).not.toContain("\u001b]0;")
    expect(result.stdout).not.toContain("\u0007")
    expect(result.stdout).not.toContain("pwned")
    // it ran and said why (script(1) merges stderr into its output)
    expect(result.stdout).toContain("error: ")
  })

  it("a normal token still reveals as it is", async () => {
    const result = await cli(["token", ...connection(), "--reveal"])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toMatch(/^[\x21-\x7e]{32,}$/)
  })
})
