import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildBin, cli, connectionArgs } from "./support/bin.js"
import { freePort } from "./support/ports.js"

const run = cli

beforeAll(buildBin, 120_000)

describe("service-sdk CLI", () => {
  it("demo runs the whole story and ends with the summary", async () => {
    const result = await run(["demo"], { timeoutMs: 60_000 })
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Summary")
    // the Service's 2026 rules: a sign-in that ends, a local file among the saved tracks
    expect(result.stdout).toMatch(/sign-in ends \d{4}-\d{2}-\d{2} \(180 days after sign-in/)
    expect(result.stdout).toContain("(local file)")
    // the herd row of the summary: one token request for 1,000 callers
    expect(result.stdout).toMatch(/thundering herd\s+1,000 callers, one token\s+1\s/)
    expect(result.stdout).toContain("recovered")
    expect(result.stdout).toContain("after backing off")
    // tokens appear masked only: 4 characters, an ellipsis, 4 characters
    expect(result.stdout).toMatch(/token [A-Za-z0-9_-]{4}…[A-Za-z0-9_-]{4}/)
    // every step says, in one line, what the demo sets for it and why
    const titles = result.stdout.split("\n").filter((line) => line.startsWith("▶ "))
    const sets = result.stdout.split("\n").filter((line) => line.startsWith("  sets: "))
    expect(titles).toHaveLength(8)
    expect(sets).toHaveLength(8)
    expect(result.stdout).toContain("token lifetime 2 s")
    expect(result.stdout).toContain("skew 1 s")
    expect(result.stdout).not.toContain("renewed 1 s early")
    // every row's counts are what its step makes: [token requests, API requests]
    const expected: Record<string, readonly [number, number]> = {
      "client credentials": [1, 1],
      "authorization code": [1, 0],
      "profile + saved tracks": [0, 2],
      "expiry → refresh": [1, 1],
      "thundering herd": [1, 0],
      "401 → forced refresh": [1, 2],
      "503 storm": [0, 4],
      "public client + PKCE": [2, 1]
    }
    const summary = result.stdout.slice(result.stdout.indexOf("Summary"))
    for (const [label, [tokens, api]] of Object.entries(expected)) {
      const row = summary.split("\n").find((line) => line.startsWith(label))
      expect(row, label).toBeDefined()
      expect(
        row!
          .match(/\s(\d+)\s+(\d+)\s+[\d.]+ s$/)
          ?.slice(1)
          .map(Number),
        label
      ).toEqual([tokens, api])
    }
    // the totals: the rows plus the set-up requests the closing line names
    const total =
      /saw (\d+) token requests .* and (\d+) API requests: the rows above \((\d+) and (\d+)\) plus (\d+) token requests/.exec(
        result.stdout
      )
    expect(total).not.toBeNull()
    const [tokenTotal, apiTotal, rowTokens, rowApi, setUp] = total!.slice(1).map(Number)
    expect(rowTokens).toBe(Object.values(expected).reduce((sum, [tokens]) => sum + tokens, 0))
    expect(rowApi).toBe(Object.values(expected).reduce((sum, [, api]) => sum + api, 0))
    expect(apiTotal).toBe(rowApi)
    expect(tokenTotal).toBe(rowTokens! + setUp!)
  }, 90_000)

  it("token --emulator --json prints valid JSON with a masked token", async () => {
    const result = await run(["token", "--emulator", "--json"])
    expect(result.code).toBe(0)
    const json = JSON.parse(result.stdout.trim())
    expect(json.access_token).toMatch(/^.{4}….{4}$/)
    expect(json.token_type).toBe("Bearer")
    expect(json.expires_in).toBeGreaterThan(3500)
    expect(json.expires_in).toBeLessThanOrEqual(3600)
  })

  it("token --emulator --reveal prints the raw token alone, for piping", async () => {
    const result = await run(["token", "--emulator", "--reveal"])
    expect(result.code).toBe(0)
    const token = result.stdout.trim()
    expect(token).not.toContain("…")
    expect(token.length).toBeGreaterThanOrEqual(32)
    expect(token.split("\n")).toHaveLength(1)
  })

  it("missing credentials exit non-zero with one line naming the variables", async () => {
    const result = await run(["token"])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("SERVICE_SDK_CLIENT_ID")
    expect(result.stderr).toContain("SERVICE_SDK_CLIENT_SECRET")
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
  })

  it("a network failure says which URL", async () => {
    const result = await run([
      "token",
      "--auth-url",
      "http://127.0.0.1:9",
      "--client-id",
      "id",
      "--client-secret",
      "secret-canary-value"
    ])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("http://127.0.0.1:9")
    expect(result.stderr).not.toContain("secret-canary-value")
  })

  it("--help works on every command", async () => {
    for (const command of [[], ["demo"], ["token"], ["login"], ["whoami"], ["emulator"]]) {
      const result = await run([...command, "--help"])
      expect(result.code, `service-sdk ${command.join(" ")} --help`).toBe(0)
      expect(result.stdout).toContain("Usage:")
    }
  })

  describe("login and whoami against a running emulator", () => {
    let emulator: EmulatorHandle
    beforeAll(async () => {
      emulator = await Emulator.start({ autoApprove: true })
    })
    afterAll(async () => {
      await emulator.close()
    })

    it("login --no-browser prints the URL, saves tokens (0600); whoami uses them", async () => {
      const dir = mkdtempSync(join(tmpdir(), "service-sdk-cli-"))
      const cache = join(dir, "nested", "tokens.json")
      const connection = connectionArgs(emulator)
      const port = await freePort()
      let visited = false
      const login = await run(["login", ...connection, "--no-browser", "--port", String(port), "--cache", cache], {
        onStdout: (text) => {
          const url = text.match(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/)?.[0]
          if (url !== undefined && !visited) {
            visited = true
            void fetch(url, { redirect: "follow" }).then((response) => response.text())
          }
        }
      })
      expect(login.stderr).toBe("")
      expect(login.code).toBe(0)
      expect(visited).toBe(true)
      expect(login.stdout).toContain(`tokens: saved to ${cache}`)
      // the URL once, without a browser
      expect(login.stdout.match(/\/authorize\?/g)).toHaveLength(1)
      expect(login.stdout).toContain("Logged in as emulator-user (Emulator User)")
      expect(statSync(cache).mode & 0o777).toBe(0o600)
      const saved = JSON.parse(readFileSync(cache, "utf8"))
      expect(typeof saved.access_token).toBe("string")
      expect(typeof saved.refresh_token).toBe("string")
      expect(login.stdout).not.toContain(saved.access_token)

      const whoami = await run(["whoami", ...connection, "--cache", cache])
      expect(whoami.stderr).toBe("")
      expect(whoami.code).toBe(0)
      expect(whoami.stdout).toMatch(/^Logged in as emulator-user \(Emulator User\)/)
    })

    it("whoami without a saved login says to run login", async () => {
      const dir = mkdtempSync(join(tmpdir(), "service-sdk-cli-"))
      const result = await run([
        "whoami",
        "--auth-url",
        emulator.authUrl,
        "--client-id",
        emulator.clientId,
        "--client-secret",
        emulator.clientSecret,
        "--cache",
        join(dir, "none.json")
      ])
      expect(result.code).not.toBe(0)
      expect(result.stderr).toContain("service-sdk login")
    })
  })
})
