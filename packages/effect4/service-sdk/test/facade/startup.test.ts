/**
 * Start-up: importing the Promise facade (as built) loads neither a Node HTTP client nor what only the loopback
 * sign-in needs (its server and browser opener load on `authorizeLocal`): the default HTTP client is `fetch`.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const hooks = pathToFileURL(
  join(import.meta.dirname, "..", "..", "..", "..", "service-sdk", "test", "fixtures", "recordLoads.mjs")
).href
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
  it('import "@service-sdk/effect/promise" loads no Node HTTP client and not the loopback sign-in', {
    timeout: 60_000
  }, () => {
    const urls = loads(`import * as m from "@service-sdk/effect/promise"; void m`)
    expect(urls.some((url) => url.includes("/effect4/service-sdk/dist/promise.js"))).toBe(true)
    expect(
      urls.filter((url) => /undici|NodeHttpClient|authorizeLocal\.js|node:http$|node:child_process/.test(url))
    ).toEqual([])
  })

  it("authorizeLocal loads its loopback server on use", { timeout: 60_000 }, () => {
    const urls = loads(
      [
        `import { AsyncAuthorizationCode } from "@service-sdk/effect/promise"`,
        `const auth = new AsyncAuthorizationCode({ clientId: "id", clientSecret: "secret", authUrl: "http://127.0.0.1:9", redirectUri: "http://127.0.0.1:9/cb" })`,
        `await auth.authorizeLocal({ openBrowser: false }).catch(() => {})`,
        `await auth.close()`
      ].join("\n")
    )
    expect(urls.some((url) => url.includes("authorizeLocal.js"))).toBe(true)
  })
})
