import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildBin, cleanEnv, cli, freePortArg } from "./support/bin.js"

/** Runs the built bin; every authorization URL it prints is visited (the emulator approves by itself). */
const run = async (args: ReadonlyArray<string>, env: Record<string, string> = cleanEnv()) => {
  const visited: Array<string> = []
  const result = await cli(args, {
    env,
    onStdout: (stdout) => {
      const url = stdout.match(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/)?.[0]
      if (url !== undefined && visited.length === 0) {
        visited.push(url)
        void fetch(url, { redirect: "follow" }).then((response) => response.text())
      }
    }
  })
  return { ...result, visited }
}

beforeAll(buildBin, 120_000)

describe("login with PKCE, as a confidential or a public client", () => {
  let emulator: EmulatorHandle
  beforeAll(async () => {
    emulator = await Emulator.start({ autoApprove: true, rotateRefreshTokens: true, tokenLifetime: 1 })
  })
  afterAll(async () => {
    await emulator.close()
  })
  const cacheFile = () => join(mkdtempSync(join(tmpdir(), "service-sdk-cli-pkce-")), "tokens.json")

  it("login --public-client signs in with no secret; whoami refreshes as a public client with no flag", async () => {
    const cache = cacheFile()
    const urls = ["--auth-url", emulator.authUrl, "--api-url", emulator.apiUrl]
    const before = await emulator.stats()
    const login = await run([
      "login",
      ...urls,
      "--client-id",
      emulator.publicClientId,
      "--public-client",
      "--no-browser",
      "--port",
      await freePortArg(),
      "--cache",
      cache
    ])
    expect(login.stderr).toBe("")
    expect(login.code).toBe(0)
    expect(login.stdout).toContain("public client")
    const params = new URL(login.visited[0]!).searchParams
    expect(params.get("client_id")).toBe(emulator.publicClientId)
    expect(params.get("code_challenge_method")).toBe("S256")
    const saved = JSON.parse(readFileSync(cache, "utf8"))
    expect(JSON.parse(readFileSync(`${cache}.client.json`, "utf8"))).toEqual({
      client_id: emulator.publicClientId,
      public_client: true,
      auth_url: emulator.authUrl,
      api_url: emulator.apiUrl
    })
    expect(statSync(`${cache}.client.json`).mode & 0o777).toBe(0o600)

    // the 1 s token is stale at once (skew): whoami must refresh, as a public client, with no id or secret given
    const whoami = await run(["whoami", ...urls, "--cache", cache])
    expect(whoami.stderr).toBe("")
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toContain("emulator-user")
    const after = await emulator.stats()
    expect(after.tokenRequests.authorization_code - before.tokenRequests.authorization_code).toBe(1)
    expect(after.tokenRequests.refresh_token - before.tokenRequests.refresh_token).toBeGreaterThanOrEqual(1)
    // rotation: the saved refresh token was replaced
    expect(JSON.parse(readFileSync(cache, "utf8")).refresh_token).not.toBe(saved.refresh_token)
  })

  it("SERVICE_SDK_PUBLIC_CLIENT=1 works like the flag and SERVICE_SDK_CLIENT_SECRET is not read", async () => {
    const cache = cacheFile()
    const env = cleanEnv({
      SERVICE_SDK_PUBLIC_CLIENT: "1",
      SERVICE_SDK_CLIENT_ID: emulator.publicClientId,
      // a public client never sends it: were it sent, the emulator would refuse the public client
      SERVICE_SDK_CLIENT_SECRET: "not-a-secret-of-a-public-client",
      SERVICE_SDK_AUTH_URL: emulator.authUrl,
      SERVICE_SDK_API_URL: emulator.apiUrl
    })
    const login = await run(["login", "--no-browser", "--port", await freePortArg(), "--cache", cache], env)
    expect(login.stderr).toBe("")
    expect(login.code).toBe(0)
    const whoami = await run(["whoami", "--cache", cache], env)
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toContain("emulator-user")
  })

  it("a confidential login uses PKCE too, and whoami still needs its secret", async () => {
    const cache = cacheFile()
    const connection = ["--auth-url", emulator.authUrl, "--api-url", emulator.apiUrl, "--client-id", emulator.clientId]
    const login = await run([
      "login",
      ...connection,
      "--client-secret",
      emulator.clientSecret,
      "--no-browser",
      "--port",
      await freePortArg(),
      "--cache",
      cache
    ])
    expect(login.code).toBe(0)
    expect(new URL(login.visited[0]!).searchParams.get("code_challenge_method")).toBe("S256")
    expect(JSON.parse(readFileSync(`${cache}.client.json`, "utf8")).public_client).toBe(false)
    const missing = await run(["whoami", ...connection, "--cache", cache])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain("--client-secret")
    const whoami = await run(["whoami", ...connection, "--client-secret", emulator.clientSecret, "--cache", cache])
    expect(whoami.code).toBe(0)
    expect(whoami.stdout).toContain("emulator-user")
  })

  it("--public-client with --client-secret is a clear error", async () => {
    const cache = cacheFile()
    const result = await run([
      "login",
      "--auth-url",
      emulator.authUrl,
      "--client-id",
      emulator.publicClientId,
      "--client-secret",
      "x",
      "--public-client",
      "--no-browser",
      "--cache",
      cache
    ])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("--public-client")
    expect(existsSync(cache)).toBe(false)
  })
})

describe("the demo", () => {
  it("has the public-client step, and it succeeds", async () => {
    const result = await run(["demo"])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("▶ Public client with PKCE: no secret anywhere")
    expect(result.stdout).toContain("code_challenge_method=S256, no client secret")
    expect(result.stdout).toMatch(/public client \+ PKCE\s+.*signed in \(PKCE\) and refreshed, no secret\s+2\s+1/)
  }, 60_000)
})
