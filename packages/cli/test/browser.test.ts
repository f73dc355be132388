import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser } from "playwright-core"
import { CHROMIUM, freePort, hasChromium, launchChromium, required, warnIfMissing } from "./support/chromium.js"
import { AuthenticationError, AuthorizationCode, authorizeLocal, type TokenInfo } from "@service-sdk/effect"

warnIfMissing("browser tests")

describe("consent → loopback redirect in headless Chromium", () => {
  it.runIf(required && !hasChromium)("Chromium must be installed where SERVICE_SDK_REQUIRE_BROWSER=1 (CI)", () => {
    expect.fail(`${CHROMIUM} is missing, so the browser test would be skipped`)
  })

  describe.skipIf(!hasChromium)("with Chromium", () => {
    let browser: Browser
    let emulator: EmulatorHandle
    const screenshots = mkdtempSync(join(tmpdir(), "service-sdk-browser-"))
    const scope = ["user-read-private", "user-library-read"]

    beforeAll(async () => {
      emulator = await Emulator.start({ autoApprove: false })
      browser = await launchChromium()
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await emulator?.close()
    })

    /** Runs authorizeLocal; resolves the URL it hands out, and its result. */
    const startAuthorization = async () => {
      const port = await freePort()
      let handUrl: (url: string) => void = () => {}
      const url = new Promise<string>((resolve) => {
        handUrl = resolve
      })
      const layer = AuthorizationCode.layer({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        redirectUri: `http://127.0.0.1:${port}/callback`,
        scope
      }).pipe(Layer.provide(NodeHttpClient.layerUndici))
      const result = Effect.runPromiseExit(
        authorizeLocal({ openBrowser: false, timeout: "30 seconds", onAuthorizationUrl: (u) => handUrl(u) }).pipe(
          Effect.provide(layer)
        )
      )
      return { url: await url, result, port }
    }

    it("approve: the consent page lists the scopes, the success page shows, a TokenInfo comes back", async () => {
      const { url, result, port } = await startAuthorization()
      const page = await browser.newPage()
      await page.goto(url)
      const consent = await page.textContent("body")
      for (const name of scope) expect(consent).toContain(name)
      await page.screenshot({ path: join(screenshots, "consent.png") })
      const [callback] = await Promise.all([
        page.waitForResponse((response) => response.url().startsWith(`http://127.0.0.1:${port}/callback`)),
        page.click("#approve")
      ])
      expect(callback.status()).toBe(200)
      await page.waitForLoadState()
      expect((await page.textContent("body"))?.toLowerCase()).toContain("complete")
      await page.screenshot({ path: join(screenshots, "success.png") })
      await page.close()

      const exit = await result
      expect(Exit.isSuccess(exit)).toBe(true)
      const token = (exit as Exit.Success<TokenInfo, never>).value
      expect(Redacted.value(token.accessToken).length).toBeGreaterThan(16)
      // the exchange fails without a refresh token: what can go wrong here is keeping the wrong one
      expect(Redacted.value(token.refreshToken!)).not.toBe(Redacted.value(token.accessToken))
      expect(token.scope).toBe(scope.join(" "))
      expect(existsSync(join(screenshots, "consent.png"))).toBe(true)
      const stats = await emulator.stats()
      expect(stats.tokenRequests.authorization_code).toBe(1)
    }, 60_000)

    it("deny: the failure page (HTTP 400) names the error and the helper fails with AuthenticationError", async () => {
      const { url, result, port } = await startAuthorization()
      const page = await browser.newPage()
      await page.goto(url)
      const [callback] = await Promise.all([
        page.waitForResponse((response) => response.url().startsWith(`http://127.0.0.1:${port}/callback`)),
        page.click("#deny")
      ])
      expect(callback.status()).toBe(400)
      await page.waitForLoadState()
      expect(await page.textContent("body")).toContain("access_denied")
      await page.screenshot({ path: join(screenshots, "failure.png") })
      await page.close()

      const exit = await result
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toBeInstanceOf(AuthenticationError)
      expect((error as AuthenticationError).payload?.error).toBe("access_denied")
    }, 60_000)
  })
})
