/**
 * Issue 42 item 13 and DESIGN.md section 9 (CLI), through the built bin in a fresh environment (HOME and
 * XDG_CONFIG_HOME in a temp dir, no SERVICE_SDK_* variable): `login` saves what later commands need (auth URL, API
 * URL, client id, public or not) beside the tokens; `whoami`, `token --user` and `logout` then work in a new shell
 * with no flag and no environment, and flags and the environment override the saved URLs (the client id only by
 * `--client-id`: the tokens belong to the saved client). A mistyped command or
 * option gets "did you mean"; every failure is one `error:` line; no Effect log line (`WARN (#19)`) is printed.
 */
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { approveFirstUrl, buildBin, cleanEnv, cli as runCli, type RunOptions } from "./support/bin.js"

beforeAll(buildBin, 120_000)

/** A new shell of a user who never configured anything: its own HOME and config directory, no SERVICE_SDK_*. */
const freshShell = () => {
  const home = mkdtempSync(join(tmpdir(), "cli-fresh-home-"))
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" })
  return { env, tokens: join(home, ".config", "service-sdk", "tokens.json") }
}

/** Each command may take tens of seconds on a loaded machine (a cold start of the bin): generous bounded waits. */
const cli = (args: ReadonlyArray<string>, options: RunOptions = {}) => runCli(args, { timeoutMs: 180_000, ...options })
const SLOW = { timeout: 900_000 }

const EFFECT_LOG_LINE = /\b(?:WARN|INFO|DEBUG|ERROR|FATAL|TRACE) \(#\d+\)|level=\w+ fiber=/

const login = (env: Record<string, string>, args: ReadonlyArray<string>) =>
  cli(["login", "--no-browser", ...args], { env, onStdout: approveFirstUrl() })

// at once: each in its own shell (HOME), most of their time waiting on processes and refused connections
describe.concurrent("the saved login, in a new shell", () => {
  let emulator: EmulatorHandle
  beforeAll(async () => {
    emulator = await Emulator.start({ autoApprove: true })
  })
  afterAll(async () => {
    await emulator?.close()
  })

  it("a public client: whoami, token --user and logout need no flag and no environment", SLOW, async () => {
    const shell = freshShell()
    const signedIn = await login(shell.env, [
      "--auth-url",
      emulator.authUrl,
      "--api-url",
      emulator.apiUrl,
      "--public-client",
      "--client-id",
      emulator.publicClientId
    ])
    expect(signedIn.stderr).toBe("")
    expect(signedIn.code).toBe(0)
    expect(JSON.parse(readFileSync(`${shell.tokens}.client.json`, "utf8"))).toEqual({
      client_id: emulator.publicClientId,
      public_client: true,
      auth_url: emulator.authUrl,
      api_url: emulator.apiUrl
    })

    const whoami = await cli(["whoami"], { env: shell.env })
    expect(whoami.stderr).toBe("")
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toContain("Logged in as emulator-user")

    const masked = await cli(["token", "--user"], { env: shell.env })
    expect(masked.stderr).toBe("")
    expect(masked.code).toBe(0)
    const revealed = await cli(["token", "--user", "--reveal"], { env: shell.env })
    expect(revealed.code).toBe(0)
    const token = revealed.stdout.trim()
    expect(token).toMatch(/^\S{20,}$/)
    expect(masked.stdout).toMatch(/^access token \S+, expires in \d+ s/)
    expect(masked.stdout).not.toContain(token)
    // it is the user's token: /me answers with it
    const me = await fetch(`${emulator.apiUrl}/me`, { headers: { authorization: `Bearer ${token}` } })
    expect(((await me.json()) as { id: string }).id).toBe("emulator-user")
    const json = JSON.parse((await cli(["token", "--user", "--json"], { env: shell.env })).stdout)
    expect(json.access_token).not.toBe(token)
    expect(json.token_type).toBe("Bearer")

    const logout = await cli(["logout"], { env: shell.env })
    expect(logout.code).toBe(0)
    expect(logout.stdout.trim()).toBe(`Logged out: removed ${shell.tokens} and ${shell.tokens}.client.json`)
    expect(existsSync(shell.tokens)).toBe(false)
    const after = await cli(["whoami"], { env: shell.env })
    expect(after.code).toBe(1)
    expect(after.stderr).toMatch(/^error: not signed in/)
  })

  it("flags and the environment override the saved login", SLOW, async () => {
    const shell = freshShell()
    const signedIn = await login(shell.env, [
      "--auth-url",
      emulator.authUrl,
      "--api-url",
      emulator.apiUrl,
      "--public-client",
      "--client-id",
      emulator.publicClientId
    ])
    expect(signedIn.code).toBe(0)
    const nowhere = "http://127.0.0.1:9/v1"
    const byEnv = await cli(["whoami"], { env: { ...shell.env, SERVICE_SDK_API_URL: nowhere } })
    expect(byEnv.code).toBe(1)
    expect(byEnv.stderr).toMatch(/^error: /)
    const byFlag = await cli(["whoami", "--api-url", nowhere], { env: shell.env })
    expect(byFlag.code).toBe(1)
    // another accounts service named by the environment: the saved tokens are not for it, and the error says so
    const otherServer = await cli(["whoami"], { env: { ...shell.env, SERVICE_SDK_AUTH_URL: "http://127.0.0.1:9" } })
    expect(otherServer.code).toBe(1)
    expect(otherServer.stderr).toContain(`is for ${emulator.authUrl}, not http://127.0.0.1:9`)
    // the client is the saved one's (the tokens belong to it): only --client-id names another
    const otherClient = await cli(["whoami", "--client-id", "another-client"], { env: shell.env })
    expect(otherClient.code).toBe(1)
    expect(otherClient.stderr).toMatch(/no usable token for another-client/)
    const envClient = await cli(["whoami"], { env: { ...shell.env, SERVICE_SDK_CLIENT_ID: "another-client" } })
    expect(envClient.code).toBe(0)
    expect((await cli(["whoami"], { env: shell.env })).code).toBe(0)
  })

  it(
    "a confidential client: the secret is never saved; a fresh token serves without it, renewing asks for it",
    SLOW,
    async () => {
      const shell = freshShell()
      const signedIn = await login(shell.env, [
        "--auth-url",
        emulator.authUrl,
        "--api-url",
        emulator.apiUrl,
        "--client-id",
        emulator.clientId,
        "--client-secret",
        emulator.clientSecret
      ])
      expect(signedIn.code).toBe(0)
      const saved = readFileSync(`${shell.tokens}.client.json`, "utf8")
      expect(saved).not.toContain(emulator.clientSecret)
      expect(JSON.parse(saved).public_client).toBe(false)
      const whoami = await cli(["whoami"], { env: shell.env })
      expect(whoami.stderr).toBe("")
      expect(whoami.stdout).toContain("Logged in as emulator-user")

      // a stale saved token: renewing needs the secret, and the error says how to give it
      const stale = JSON.parse(readFileSync(shell.tokens, "utf8"))
      const { writeFileSync } = await import("node:fs")
      writeFileSync(shell.tokens, JSON.stringify({ ...stale, expires_at: stale.expires_at - 7200 }), { mode: 0o600 })
      const noSecret = await cli(["whoami"], { env: shell.env })
      expect(noSecret.code).toBe(1)
      expect(noSecret.stderr).toMatch(/^error: .*--client-secret or set SERVICE_SDK_CLIENT_SECRET/)
      const withSecret = await cli(["whoami"], {
        env: { ...shell.env, SERVICE_SDK_CLIENT_SECRET: emulator.clientSecret }
      })
      expect(withSecret.stderr).toBe("")
      expect(withSecret.code).toBe(0)
    }
  )

  it("warnings are the CLI's own lines, never Effect's log format", SLOW, async () => {
    // a sign-in that ends within 7 days: the SDK warns at every use
    const ending = await Emulator.start({ autoApprove: true, refreshTokenLifetime: 86_400, tokenLifetime: 1 })
    try {
      const shell = freshShell()
      const signedIn = await login(shell.env, [
        "--auth-url",
        ending.authUrl,
        "--api-url",
        ending.apiUrl,
        "--public-client",
        "--client-id",
        ending.publicClientId
      ])
      expect(signedIn.code).toBe(0)
      const whoami = await cli(["whoami"], { env: shell.env })
      expect(whoami.code).toBe(0)
      expect(whoami.stderr).toMatch(/^warning: /m)
      expect(whoami.stderr).not.toMatch(EFFECT_LOG_LINE)
      const verbose = await cli(["whoami", "-v"], { env: shell.env })
      expect(verbose.stderr).toMatch(/^debug: whoami: the saved login/m)
      expect(verbose.stderr).not.toMatch(EFFECT_LOG_LINE)
    } finally {
      await ending.close()
    }
  })
})

describe("mistakes", () => {
  it("a mistyped command gets did you mean", SLOW, async () => {
    const result = await cli(["whoamo"], { env: freshShell().env })
    expect(result.code).toBe(1)
    expect(result.stderr.split("\n")[0]).toBe(
      'error: unknown command "whoamo": did you mean "whoami"? use one of demo, token, login, whoami, logout, emulator'
    )
    const far = await cli(["frobnicate"], { env: freshShell().env })
    expect(far.stderr).not.toContain("did you mean")
  })

  it("an unknown option is one error: line like every other error, with did you mean", SLOW, async () => {
    const result = await cli(["token", "--reveel"], { env: freshShell().env })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(
      "error: unknown option --reveel for token: did you mean --reveal?\nRun `service-sdk token --help` to see the options.\n"
    )
    expect(result.stderr).not.toMatch(EFFECT_LOG_LINE)
  })
})
