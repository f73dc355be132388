import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import type { Browser } from "playwright-core"
import { CHROMIUM, freePort, hasChromium, launchChromium, required, warnIfMissing } from "./support/chromium.js"
import { AuthorizationCode, authorizeLocal, type TokenInfo } from "@service-sdk/effect"

warnIfMissing("browser tests (PKCE)")

describe("a public client signs in with PKCE in headless Chromium", () => {
  it.runIf(required && !hasChromium)("Chromium must be installed where SERVICE_SDK_REQUIRE_BROWSER=1 (CI)", () => {
    expect.fail(`${CHROMIUM} is missing, so the browser test would be skipped`)
  })

  describe.skipIf(!hasChromium)("with Chromium", () => {
    let browser: Browser
    let emulator: EmulatorHandle

    beforeAll(async () => {
      emulator = await Emulator.start({ autoApprove: false })
      browser = await launchChromium()
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await emulator?.close()
    })

    it("authorizeLocal as a public client: consent #approve, tokens back, the URL carried an S256 challenge", async () => {
      const port = await freePort()
      let handUrl: (url: string) => void = () => {}
      const opened = new Promise<string>((resolve) => {
        handUrl = resolve
      })
      const layer = AuthorizationCode.layer({
        clientId: emulator.publicClientId,
        publicClient: true,
        authUrl: emulator.authUrl,
        redirectUri: `http://127.0.0.1:${port}/callback`,
        scope: "user-read-private"
      }).pipe(Layer.provide(NodeHttpClient.layerUndici))
      const result = Effect.runPromiseExit(
        authorizeLocal({ openBrowser: false, timeout: "30 seconds", onAuthorizationUrl: (u) => handUrl(u) }).pipe(
          Effect.provide(layer)
        )
      )
      const url = await opened
      const params = new URL(url).searchParams
      expect(params.get("client_id")).toBe(emulator.publicClientId)
      expect(params.get("code_challenge_method")).toBe("S256")
      expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)

      const page = await browser.newPage()
      await page.goto(url)
      expect(await page.textContent("#client-id")).toBe(emulator.publicClientId)
      const [callback] = await Promise.all([
        page.waitForResponse((response) => response.url().startsWith(`http://127.0.0.1:${port}/callback`)),
        page.click("#approve")
      ])
      expect(callback.status()).toBe(200)
      // the redirect back carries the code and state, never the verifier
      expect(new URL(callback.url()).searchParams.has("code_verifier")).toBe(false)
      await page.close()

      const exit = await result
      expect(Exit.isSuccess(exit)).toBe(true)
      const token = (exit as Exit.Success<TokenInfo, never>).value
      expect(Redacted.value(token.accessToken).length).toBeGreaterThan(16)
      // the exchange fails without a refresh token: what can go wrong here is keeping the wrong one
      expect(Redacted.value(token.refreshToken!)).not.toBe(Redacted.value(token.accessToken))
      const stats = await emulator.stats()
      expect(stats.tokenRequests.authorization_code).toBe(1)
    }, 60_000)
  })
})
