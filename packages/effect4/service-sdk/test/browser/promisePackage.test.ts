/**
 * `@service-sdk/promise` in a browser page (issue 40 item 1, DESIGN section 9 Browser): the built package, bundled
 * by esbuild for the browser as a page's build takes it (the package's `browser` export condition, no `source`),
 * holds no Node built-in and no `createRequire`; in real headless Chromium (Debian's, through playwright-core) the
 * page gets an app token for 20 concurrent callers with one token request and an album from the emulator (its CORS
 * for loopback origins), shares a token between two tabs with `browserTokenCache`, and what a page cannot have
 * (file, directory and Redis caches, the loopback sign-in) is a ConfigurationError that says why. A missing Chromium
 * skips loudly here and fails where SERVICE_SDK_REQUIRE_BROWSER=1 (CI).
 */
import type { Metafile } from "esbuild"
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"
import { bundle, hasChromium, launch, type PageServer, required, servePage, warnIfMissing } from "./support/page.js"
import type { AppTokenResult, Config, Refusal, SignInResult, UserConfig } from "./page/promise.js"

warnIfMissing("@service-sdk/promise in-page tests")

const browserBundle = join(import.meta.dirname, "..", "..", "..", "..", "promise", "dist", "browser.js")
const CALLERS = 20

/** The page built from the built package (dist, as published), as an app's bundler builds it. */
const buildPage = () => bundle(join(import.meta.dirname, "page", "promise.ts"), { source: false })

const nodeImports = (metafile: Metafile) =>
  Object.values(metafile.inputs).flatMap((input) =>
    input.imports
      .filter((i) => i.original?.startsWith("node:") === true || i.path.startsWith("node:") || i.external === true)
      .map((i) => i.original ?? i.path)
  )

describe("@service-sdk/promise bundled for a browser page", () => {
  it("has a browser bundle beside its Node entries (the root build: npm install or npm run build)", () => {
    expect(existsSync(browserBundle), `${browserBundle} is missing`).toBe(true)
  })

  it("resolves to the browser bundle: no Node built-in, no createRequire, no CommonJS bundle", async () => {
    const { code, metafile } = await buildPage()
    const inputs = Object.keys(metafile.inputs)
    expect(inputs.some((input) => /promise\/dist\/browser\.js$/.test(input))).toBe(true)
    expect(inputs.filter((input) => /promise\/dist\/index\.(c?js)$/.test(input))).toEqual([])
    expect(nodeImports(metafile)).toEqual([])
    expect(code).not.toMatch(/createRequire|\brequire\(["']|from ["']node:|import\(["']node:/)
  }, 120_000)
})

describe("@service-sdk/promise in a browser page (headless Chromium)", () => {
  it.runIf(required && !hasChromium)("Chromium must be installed where SERVICE_SDK_REQUIRE_BROWSER=1 (CI)", () => {
    expect.fail("/usr/bin/chromium is missing, so @service-sdk/promise's in-page tests would be skipped")
  })

  describe.skipIf(!hasChromium)("with Chromium", () => {
    let emulator: RunningEmulator
    let server: PageServer
    let context: BrowserContext
    let closeBrowser: () => Promise<void>
    let config: Config

    beforeAll(async () => {
      const [page, started] = await Promise.all([buildPage(), startEmulator(["--quiet"])])
      emulator = started
      server = await servePage(page.code)
      config = {
        authUrl: emulator.authUrl,
        apiUrl: emulator.apiUrl,
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret
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
      await page.waitForFunction(() => window.promiseSdk !== undefined, undefined, { timeout: 60_000 })
      return page
    }

    const appTokenRequests = async () => (await emulator.stats()).tokenRequests.client_credentials ?? 0

    it(`an app token for ${CALLERS} concurrent callers with one token request, and an album`, async () => {
      const page = await openTab()
      const before = await appTokenRequests()
      const result: AppTokenResult = await page.evaluate(([c, callers]) => window.promiseSdk.appToken(c, callers), [
        config,
        CALLERS
      ] as const)
      expect(result).toEqual({
        callers: CALLERS,
        distinct: 1,
        tokenRequests: 1,
        album: "Loopback Sessions",
        tracks: expect.any(Number)
      })
      expect(result.tracks).toBeGreaterThan(0)
      expect((await appTokenRequests()) - before).toBe(1)
      await page.close()
    }, 60_000)

    it("browserTokenCache: the token one tab fetched serves another tab of the origin, with no token request", async () => {
      const [first, second] = [await openTab(), await openTab()]
      const key = `promise-${Date.now()}`
      const before = await appTokenRequests()
      const one: AppTokenResult = await first.evaluate(([c, callers, k]) => window.promiseSdk.appToken(c, callers, k), [
        config,
        CALLERS,
        key
      ] as const)
      const two: AppTokenResult = await second.evaluate(
        ([c, callers, k]) => window.promiseSdk.appToken(c, callers, k),
        [config, CALLERS, key] as const
      )
      expect(one).toMatchObject({ distinct: 1, tokenRequests: 1, album: "Loopback Sessions" })
      expect(two).toMatchObject({ distinct: 1, tokenRequests: 0, album: "Loopback Sessions" })
      expect((await appTokenRequests()) - before).toBe(1)
      await Promise.all([first.close(), second.close()])
    }, 60_000)

    it("a user signs in by redirect (public client, PKCE, state), and another tab calls the API with no token request", async () => {
      const [page, other] = [await openTab(), await openTab()]
      const user: UserConfig = {
        authUrl: emulator.authUrl,
        apiUrl: emulator.apiUrl,
        clientId: "emulator-public-client",
        redirectUri: `${server.origin}/callback`,
        key: `promise-user-${Date.now()}`
      }
      // not signed in yet: the shared cache is empty
      expect(await other.evaluate((c) => window.promiseSdk.me(c), user)).toMatchObject({ ok: false })
      const before = await emulator.stats()
      const url = new URL(await page.evaluate((c) => window.promiseSdk.beginSignIn(c), user))
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(url.searchParams.get("client_id")).toBe("emulator-public-client")
      // the consent page (auto-approve) sends the user back to the page with code and state
      const answer = await fetch(url, { redirect: "manual" })
      const callback = answer.headers.get("location")!
      expect(new URL(callback).searchParams.get("code")).not.toBeNull()
      // a forged state is refused, and the pending sign-in is used up
      const forged = new URL(callback)
      forged.searchParams.set("state", "forged")
      const refused: SignInResult = await page.evaluate(([c, u]) => window.promiseSdk.completeSignIn(c, u), [
        user,
        forged.href
      ] as const)
      expect(refused.ok ? "" : refused.error).toMatch(/^AuthenticationError: .*state/i)
      // again, with the real callback
      const again = new URL(await page.evaluate((c) => window.promiseSdk.beginSignIn(c), user))
      const location = (await fetch(again, { redirect: "manual" })).headers.get("location")!
      const done: SignInResult = await page.evaluate(([c, u]) => window.promiseSdk.completeSignIn(c, u), [
        user,
        location
      ] as const)
      expect(done).toEqual({ ok: true, user: expect.any(String), tokenRequests: 1 })
      // the other tab has the user's token from the shared cache
      expect(await other.evaluate((c) => window.promiseSdk.me(c), user)).toEqual({
        ok: true,
        user: done.ok ? done.user : "",
        tokenRequests: 0
      })
      const after = await emulator.stats()
      expect((after.tokenRequests.authorization_code ?? 0) - (before.tokenRequests.authorization_code ?? 0)).toBe(1)
      await Promise.all([page.close(), other.close()])
    }, 60_000)

    it("what a page cannot have is a ConfigurationError that says why", async () => {
      const page = await openTab()
      const refusals: ReadonlyArray<Refusal> = await page.evaluate((c) => window.promiseSdk.refusals(c), config)
      const byName = Object.fromEntries(refusals.map((r) => [r.what, r]))
      for (const refusal of refusals) expect(refusal, refusal.what).toMatchObject({ configuration: true })
      expect(byName.fileTokenCache!.error).toMatch(
        /^ConfigurationError: fileTokenCache: .*no file system in a browser page/
      )
      expect(byName.directoryTokenStore!.error).toMatch(
        /^ConfigurationError: directoryTokenStore: .*no file system in a browser page/
      )
      expect(byName.RedisTokenCache!.error).toMatch(/^ConfigurationError: RedisTokenCache: .*browser page.*Redis/)
      expect(byName.RedisTokenStore!.error).toMatch(/^ConfigurationError: RedisTokenStore: .*browser page.*Redis/)
      expect(byName.asyncAuthorizeLocal!.error).toMatch(/^ConfigurationError: authorizeLocal: .*browser page.*loopback/)
      await page.close()
    }, 60_000)
  })
})
