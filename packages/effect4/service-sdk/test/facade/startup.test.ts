/**
 * Start-up: importing the Promise facade (as built) loads neither a Node HTTP client nor what only the loopback
 * sign-in needs (its server and browser opener load on `authorizeLocal`): the default HTTP client is `fetch`.
 * Line-specific tests (the Effect 3 line's default client is undici, loaded on first use) over the shared
 * `loadedUrls` (`@service-sdk/conformance/facade`).
 */
import { loadedUrls } from "@service-sdk/conformance/facade"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

/** The URLs a node process running `code` resolved (the package as built, as a user imports it). */
const loads = (code: string) => loadedUrls(code, join(import.meta.dirname, "..", ".."))

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
