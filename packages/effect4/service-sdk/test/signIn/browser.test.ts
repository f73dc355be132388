/**
 * authorizeLocal in headless Chromium (DESIGN section 6): a real browser on the emulator's consent page, its
 * `#approve` / `#deny` redirect ending in the loopback server of the Effect 4 line. Chromium is Debian's
 * `/usr/bin/chromium` driven by playwright-core (no browser download); `launch` gives it a new, empty profile.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { existsSync } from "node:fs"
import { type Browser, chromium, type Page } from "playwright-core"
import { AuthenticationError, AuthorizationCode, authorizeLocal } from "@service-sdk/effect"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
/** In CI (SERVICE_SDK_REQUIRE_BROWSER=1) a missing Chromium fails rather than skips. */
const required = process.env.SERVICE_SDK_REQUIRE_BROWSER === "1"
if (!hasChromium) {
  console.warn(`\n⚠ Effect 4 line browser tests SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium)\n`)
}

describe("Effect 4 line: consent → loopback redirect in headless Chromium", () => {
  it.runIf(required && !hasChromium)("Chromium must be installed where SERVICE_SDK_REQUIRE_BROWSER=1 (CI)", () => {
    expect.fail(`${CHROMIUM} is missing, so the Effect 4 line's browser test would be skipped`)
  })

  describe.skipIf(!hasChromium)("with Chromium", () => {
    let browser: Browser
    let emulator: RunningEmulator
    const scope = ["user-read-private", "user-library-read"]

    beforeAll(async () => {
      emulator = await startEmulator()
      // the consent page, not the automatic approval the other Effect 4 suites use
      await emulator.control("config", { autoApprove: false })
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
      })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await emulator?.stop()
    })

    /**
     * Starts authorizeLocal on an ephemeral loopback port; resolves the authorization URL it hands out (which names
     * the port in `redirect_uri`) and its outcome.
     */
    const startAuthorization = async <A, E>(
      handle: (signIn: ReturnType<typeof authorizeLocal>) => Effect.Effect<A, E, AuthorizationCode>
    ) => {
      let handUrl: (url: string) => void = () => {}
      const url = new Promise<string>((resolve) => {
        handUrl = resolve
      })
      const layer = AuthorizationCode.layer({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        redirectUri: "http://127.0.0.1/callback",
        scope
      }).pipe(Layer.provide(FetchHttpClient.layer))
      const result = Effect.runPromise(
        handle(
          authorizeLocal({ openBrowser: false, timeout: "30 seconds", onAuthorizationUrl: (u) => handUrl(u) })
        ).pipe(Effect.provide(layer))
      )
      const authorizationUrl = await url
      const callback = new URL(new URL(authorizationUrl).searchParams.get("redirect_uri")!)
      return { url: authorizationUrl, callback: `${callback.origin}${callback.pathname}`, result }
    }

    /** Clicks `selector` on the consent page; resolves the loopback server's response to the redirect. */
    const clickThrough = async (page: Page, url: string, callback: string, selector: string) => {
      await page.goto(url)
      await page.waitForSelector(selector)
      const [response] = await Promise.all([
        page.waitForResponse((response) => response.url().startsWith(callback)),
        page.click(selector)
      ])
      await page.waitForLoadState()
      return response
    }

    it("#approve: the loopback server answers the success page and authorizeLocal returns the TokenInfo", async () => {
      const before = await emulator.stats()
      const { url, callback, result } = await startAuthorization((signIn) => signIn)
      expect(callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
      const page = await browser.newPage()
      try {
        await page.goto(url)
        const consent = await page.textContent("body")
        for (const name of scope) expect(consent).toContain(name)
        const response = await clickThrough(page, url, callback, "#approve")
        expect(response.status()).toBe(200)
        expect(new URL(response.url()).searchParams.get("code")).toBeTruthy()
        expect(await page.textContent("body")).toMatch(/Authorization complete/)
      } finally {
        await page.close()
      }
      const token = await result
      expect(Redacted.value(token.accessToken).length).toBeGreaterThan(16)
      // the exchange fails without a refresh token: what can go wrong here is keeping the wrong one
      expect(token.refreshToken).toBeDefined()
      expect(Redacted.value(token.refreshToken!)).not.toBe(Redacted.value(token.accessToken))
      expect(token.scope).toBe(scope.join(" "))
      const after = await emulator.stats()
      expect((after.tokenRequests.authorization_code ?? 0) - (before.tokenRequests.authorization_code ?? 0)).toBe(1)
    }, 60_000)

    it("#deny: a failure page with HTTP 400 naming the error, and an AuthenticationError", async () => {
      const before = await emulator.stats()
      const { url, callback, result } = await startAuthorization((signIn) => Effect.flip(signIn))
      const page = await browser.newPage()
      try {
        const response = await clickThrough(page, url, callback, "#deny")
        expect(response.status()).toBe(400)
        expect(await page.textContent("body")).toContain("access_denied")
      } finally {
        await page.close()
      }
      const error = await result
      expect(error).toBeInstanceOf(AuthenticationError)
      expect((error as AuthenticationError).payload?.error).toBe("access_denied")
      // a denied sign-in exchanges no code
      const after = await emulator.stats()
      expect(after.tokenRequests.authorization_code ?? 0).toBe(before.tokenRequests.authorization_code ?? 0)
    }, 60_000)
  })
})
