/**
 * Start-up: importing the Promise facade does not load the default HTTP client (undici): it loads on the first
 * request of a facade object that was given no `httpClient`. Line-specific tests (the Effect 4 line's default client
 * is `fetch`) over the shared `loadedUrls` (`@service-sdk/conformance/facade`).
 */
import { loadedUrls } from "@service-sdk/conformance/facade"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

/** The URLs a node process running `code` resolved (the package as built, as a user imports it). */
const loads = (code: string) => loadedUrls(code, join(import.meta.dirname, "..", ".."))

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
