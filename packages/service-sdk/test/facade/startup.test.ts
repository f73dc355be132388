/**
 * Start-up: importing the Promise facade does not load the default HTTP client (undici): it loads on the first
 * request of a facade object that was given no `httpClient`.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const hooks = pathToFileURL(join(import.meta.dirname, "..", "fixtures", "recordLoads.mjs")).href
const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)})`

/** The URLs a node process running `code` resolved (the package as built, as a user imports it). */
const loads = (code: string): ReadonlyArray<string> => {
  const dir = mkdtempSync(join(tmpdir(), "startup-"))
  try {
    const record = join(dir, "loads.txt")
    execFileSync(process.execPath, ["--import", register, "--input-type=module", "-e", code], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...process.env, RECORD_LOADS: record },
      stdio: ["ignore", "ignore", "inherit"]
    })
    return readFileSync(record, "utf8").trim().split("\n")
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("start-up", () => {
  it('import "@service-sdk/effect/promise" loads neither undici nor the platform\'s Node HTTP client', {
    timeout: 60_000
  }, () => {
    const urls = loads(`import * as m from "@service-sdk/effect/promise"; void m`)
    expect(urls.some((url) => url.includes("/service-sdk/dist/promise.js"))).toBe(true)
    expect(urls.filter((url) => /undici|NodeHttpClient/.test(url))).toEqual([])
  })

  it("a facade object without httpClient loads the undici client on its first request", { timeout: 60_000 }, () => {
    const urls = loads(
      [
        `import { AsyncClientCredentials } from "@service-sdk/effect/promise"`,
        `const auth = new AsyncClientCredentials({ clientId: "id", clientSecret: "secret", authUrl: "http://127.0.0.1:9", maxRetries: 0 })`,
        `await auth.getAccessToken().catch(() => {})`,
        `await auth.close()`
      ].join("\n")
    )
    expect(urls.some((url) => url.includes("NodeHttpClient"))).toBe(true)
  })
})
