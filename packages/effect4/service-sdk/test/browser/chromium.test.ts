/**
 * The Effect 4 line in real headless Chromium (DESIGN section 9, Browser; issue 40): a page built from the package
 * (esbuild, platform "browser") on its own loopback origin, against the emulator (CORS) with rotating refresh tokens
 * and 2-second tokens. The redirect sign-in end to end and its callback rules; 8 tabs of one origin calling
 * getAccessToken and the API for 20 s on one `TokenCache.browser` (one token request per renewal for all tabs, no
 * invalid_grant, no failed call); a tab closed while it holds the lock; no Web Locks → ConfigurationError.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"
import type { Config, LoopResult } from "./page/app.js"
import { bundle, hasChromium, launch, type PageServer, required, servePage, warnIfMissing } from "./support/page.js"

warnIfMissing("Effect 4 line in-page tests (TokenCache.browser, BrowserSignIn)")

const TABS = 8
const LOOP_MILLIS = 20_000
const LIFETIME_SECONDS = 2
const SCOPE = "user-read-private user-library-read"

describe("Effect 4 line in a browser page (headless Chromium)", () => {
  it.runIf(required && !hasChromium)("Chromium must be installed where SERVICE_SDK_REQUIRE_BROWSER=1 (CI)", () => {
    expect.fail("/usr/bin/chromium is missing, so the Effect 4 line's in-page tests would be skipped")
  })

  describe.skipIf(!hasChromium)("with Chromium", () => {
    let emulator: RunningEmulator
    let server: PageServer
    let context: BrowserContext
    let closeBrowser: () => Promise<void>
    let config: Config

    beforeAll(async () => {
      const page = await bundle(join(import.meta.dirname, "page", "app.ts"))
      server = await servePage(page.code)
      emulator = await startEmulator(["--quiet", "--rotate-refresh-tokens", "--token-lifetime", `${LIFETIME_SECONDS}`])
      config = {
        authUrl: emulator.authUrl,
        apiUrl: emulator.apiUrl,
        clientId: "emulator-public-client",
        redirectUri: `${server.origin}/callback`
      }
      const launched = await launch()
      context = launched.context
      closeBrowser = launched.close
    }, 120_000)
    afterAll(async () => {
      await closeBrowser?.()
      await emulator?.stop()
      await server?.close()
    })

    const openTab = async (): Promise<Page> => {
      const page = await context.newPage()
      page.on("pageerror", (error) => console.warn(`page error: ${error.message}`))
      await page.goto(`${server.origin}/`)
      await page.waitForFunction(() => window.sdk !== undefined)
      await page.evaluate((c) => window.sdk.configure(c), config)
      return page
    }

    const tokenStats = async () => (await emulator.stats()).tokenRequests

    it("signs in by redirect: consent page, back to the page with code and state, exchange with PKCE", async () => {
      const page = await openTab()
      const before = await tokenStats()
      await page.evaluate((scope) => void window.sdk.signIn(scope), SCOPE)
      // the emulator approves at once (auto-approve) and redirects back to the page's /callback
      await page.waitForURL((url) => url.pathname === "/callback", { timeout: 30_000 })
      const outcome = await page.evaluate(() => window.ready)
      expect(outcome).toMatchObject({ ok: true })
      const status = await page.evaluate(() => window.sdk.status())
      // used once, and no code left in the address bar or the history
      expect(status.pending).toBe(false)
      expect(status.callback).toBe(false)
      expect(new URL(status.href).search).toBe("")
      expect(await page.evaluate(() => window.sdk.stored())).toMatchObject({ refresh: true })
      const after = await tokenStats()
      expect(after.authorization_code! - before.authorization_code!).toBe(1)
      await page.close()
    }, 60_000)

    it("callback rules in the page: state first, repeated parameters, iss, errors; a pending sign-in is used once", async () => {
      const page = await openTab()
      const begin = async () => {
        const url = new URL(await page.evaluate((scope) => window.sdk.begin(scope), SCOPE))
        expect(url.searchParams.get("code_challenge_method")).toBe("S256")
        expect(url.searchParams.get("client_id")).toBe("emulator-public-client")
        return url.searchParams.get("state")!
      }
      const complete = (url: string) => page.evaluate((u) => window.sdk.complete(u), url)
      const callback = `${server.origin}/callback`

      // a forged state: refused before anything else, and the pending sign-in is gone
      let state = await begin()
      let result = await complete(`${callback}?code=forged&state=not-${state}&error=access_denied`)
      expect(result).toMatchObject({ ok: false })
      expect(result.ok ? "" : result.error).toMatch(/^AuthenticationError.*state/i)
      expect((await page.evaluate(() => window.sdk.status())).pending).toBe(false)

      // a repeated parameter (RFC 6749 §3.1)
      state = await begin()
      result = await complete(`${callback}?code=a&code=b&state=${state}`)
      expect(result.ok ? "" : result.error).toMatch(/^AuthenticationError.*(repeat|more than once)/i)

      // an issuer that is not the authorization server (RFC 9207)
      state = await begin()
      result = await complete(`${callback}?code=a&state=${state}&iss=${encodeURIComponent("https://evil.example")}`)
      expect(result.ok ? "" : result.error).toMatch(/^AuthenticationError.*iss/i)

      // the server's error
      state = await begin()
      result = await complete(`${callback}?error=access_denied&state=${state}`)
      expect(result.ok ? "" : result.error).toMatch(/^AuthenticationError\(access_denied\)/)

      // a real code, completed once; the same callback again finds nothing pending
      const url = await page.evaluate((scope) => window.sdk.begin(scope), SCOPE)
      const answer = await fetch(url, { redirect: "manual" })
      const location = answer.headers.get("location")!
      expect(new URL(location).searchParams.get("code")).not.toBeNull()
      expect(await complete(location)).toMatchObject({ ok: true })
      result = await complete(location)
      expect(result.ok ? "" : result.error).toMatch(/^AuthenticationError.*no sign-in is pending/)
      await page.close()
    }, 60_000)

    it(`${TABS} tabs for ${LOOP_MILLIS / 1000} s on one origin: one token request per renewal, no invalid_grant, no failed call`, async () => {
      const tabs = await Promise.all(Array.from({ length: TABS }, () => openTab()))
      expect(await tabs[0]!.evaluate(() => window.sdk.stored())).toMatchObject({ refresh: true })
      const before = await tokenStats()
      const started = Date.now()
      const results: ReadonlyArray<LoopResult> = await Promise.all(
        tabs.map((tab) => tab.evaluate((millis) => window.sdk.loop(millis), LOOP_MILLIS))
      )
      const elapsedSeconds = (Date.now() - started) / 1000
      const after = await tokenStats()
      await Promise.all(tabs.map((tab) => tab.close()))

      const refreshes = after.refresh_token! - before.refresh_token!
      const sent = results.reduce((sum, r) => sum + r.tokenRequests, 0)
      // a 2 s token is renewed at half its lifetime (DESIGN section 4, short-lived tokens): one renewal point a second
      const renewalPoints = elapsedSeconds / (LIFETIME_SECONDS / 2)
      const figures = {
        tabs: TABS,
        seconds: Math.round(elapsedSeconds * 10) / 10,
        calls: results.reduce((sum, r) => sum + r.calls, 0),
        tokenRequests: refreshes,
        perRenewal: Math.round((refreshes / renewalPoints) * 100) / 100,
        perTokenLifetime: Math.round((refreshes / (elapsedSeconds / LIFETIME_SECONDS)) * 100) / 100,
        longestFollowerWaitMs: Math.max(...results.map((r) => r.longestFollowerWaitMs)),
        longestLeaderWaitMs: Math.max(...results.map((r) => r.longestLeaderWaitMs)),
        tabsThatRenewed: results.filter((r) => r.tokenRequests > 0).length
      }
      console.log(`browser cross-tab figures: ${JSON.stringify(figures)}`)
      expect(results.flatMap((r) => r.failures)).toEqual([])
      expect(results.reduce((sum, r) => sum + r.invalidGrant, 0)).toBe(0)
      expect(sent).toBe(refreshes)
      expect(refreshes).toBeGreaterThan(0)
      expect(refreshes).toBeLessThanOrEqual(Math.ceil(renewalPoints * 1.2))
      // every tab was served, and the renewals were shared: tokens made by other tabs reached every tab
      for (const result of results) expect(result.calls).toBeGreaterThan(10)
      expect(figures.tabsThatRenewed).toBeGreaterThan(1)
      expect(await emulator.stats()).toMatchObject({ apiRequests: { byStatus: { 200: expect.any(Number) } } })
      const byStatus = (await emulator.stats()).apiRequests.byStatus
      expect(Object.keys(byStatus).filter((status) => status !== "200")).toEqual([])
    }, 120_000)

    it("a tab closed while it holds the lock: the other tabs take it at once and go on", async () => {
      const holder = await openTab()
      const waiter = await openTab()
      await holder.evaluate(() => window.sdk.holdLock())
      // let the cached token go stale, so the waiter needs the lock
      await new Promise((resolve) => setTimeout(resolve, LIFETIME_SECONDS * 1000))
      const before = await tokenStats()
      const waiting = waiter.evaluate(() => window.sdk.getAccessTokenOnce())
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const closedAt = Date.now()
      await holder.close()
      const result = await waiting
      const afterClose = Date.now() - closedAt
      console.log(
        `browser lock-holder closed: waiter served ${afterClose} ms after the close (waited ${result.millis} ms)`
      )
      expect(result.ok).toBe(true)
      // it waited for the holder (the lock was held), and was served soon after the tab went away
      expect(result.millis).toBeGreaterThanOrEqual(1400)
      expect(afterClose).toBeLessThan(10_000)
      const after = await tokenStats()
      expect(after.refresh_token! - before.refresh_token!).toBe(1)
      expect(await waiter.evaluate(() => window.sdk.stored())).toMatchObject({ refresh: true })
      await waiter.close()
    }, 60_000)

    it("no Web Locks: TokenCache.browser is a ConfigurationError, never a per-tab cache", async () => {
      const page = await openTab()
      // with Web Locks, the Promise facade's cache is the tabs' shared entry
      expect(await page.evaluate(() => window.sdk.promiseCacheHasEntry())).toBe(true)
      const text = await page.evaluate(() => {
        Object.defineProperty(Navigator.prototype, "locks", { value: undefined, configurable: true })
        return window.sdk.cacheWithoutLocks()
      })
      expect(text).toMatch(/^ConfigurationError: .*Web Locks/)
      await page.close()
    }, 30_000)
  })
})
