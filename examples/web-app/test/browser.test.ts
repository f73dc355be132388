import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { existsSync, mkdirSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import * as WebApp from "../src/WebApp.js"

const CHROMIUM = "/usr/bin/chromium"
const hasChromium = existsSync(CHROMIUM)
const required = process.env.SERVICE_SDK_REQUIRE_BROWSER === "1"
if (!hasChromium) {
  console.warn(`\n⚠ web-app browser tests SKIPPED: ${CHROMIUM} is not installed (apt-get install chromium)\n`)
}

/** Screenshots for a person to look at (gitignored). */
const SCREENSHOTS = join(import.meta.dirname, "..", "screenshots")

describe("web app in headless Chromium", () => {
  it.runIf(required && !hasChromium)("Chromium must be installed where SERVICE_SDK_REQUIRE_BROWSER=1 (CI)", () => {
    expect.fail(`${CHROMIUM} is missing, so the web app browser tests would be skipped`)
  })

  describe.skipIf(!hasChromium)("with Chromium", () => {
    let browser: Browser
    let emulator: EmulatorHandle
    let scope: Scope.CloseableScope
    let app: WebApp.RunningWebApp

    beforeAll(async () => {
      mkdirSync(SCREENSHOTS, { recursive: true })
      emulator = await Emulator.start()
      scope = Effect.runSync(Scope.make())
      app = await Effect.runPromise(
        Effect.gen(function* () {
          // the HTTP client lives as long as the app (in the same scope)
          const http = yield* Layer.build(NodeHttpClient.layerUndici)
          return yield* WebApp.make({
            clientId: emulator.clientId,
            clientSecret: emulator.clientSecret,
            authUrl: emulator.authUrl,
            apiUrl: emulator.apiUrl,
            tracksShown: 5
          }).pipe(Effect.provide(http))
        }).pipe(Scope.extend(scope))
      )
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
      })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
      await emulator?.close()
    })

    /** A fresh browser profile. An action that hangs fails by name (Playwright's 20 s) before the test's 60 s. */
    const newContext = async () => {
      const context = await browser.newContext({ viewport: { width: 900, height: 900 } })
      context.setDefaultTimeout(20_000)
      return context
    }

    /** The first saved track ids of a user, straight from the emulator. */
    const libraryOf = async (userId: string, limit: number) => {
      const { access_token } = await emulator.signIn({ userId, scope: "user-library-read" })
      const response = await fetch(`${emulator.apiUrl}/me/tracks?limit=${limit}`, {
        headers: { authorization: `Bearer ${access_token}` }
      })
      const body = (await response.json()) as { items: ReadonlyArray<{ track: { id: string } }> }
      return body.items.map((item) => item.track.id)
    }

    const shownTracks = (page: Page) =>
      page.$$eval("#saved-tracks li", (items) => items.map((item) => item.getAttribute("data-track-id")))

    /** Signs in through the app: the home page's button, then the consent page with `#user` set to `userId`. */
    const signInByField = async (page: Page, userId: string) => {
      await page.goto(app.url)
      await page.click("#login")
      await page.waitForSelector("#approve")
      expect(await page.inputValue("#user")).toBe("emulator-user")
      await page.fill("#user", userId)
      await Promise.all([page.waitForURL(`${app.url}/`), page.click("#approve")])
    }

    /** Signs in with `login_hint`: the consent page arrives with `#user` preselected. */
    const signInByHint = async (page: Page, userId: string) => {
      await page.goto(`${app.url}/login?login_hint=${userId}`)
      await page.waitForSelector("#approve")
      expect(await page.inputValue("#user")).toBe(userId)
      await Promise.all([page.waitForURL(`${app.url}/`), page.click("#approve")])
    }

    const errorCode = (page: Page) => page.getAttribute("#error", "data-error")

    it("two browsers sign in as two users at once; each sees only its own profile and saved tracks", async () => {
      const before = await emulator.apiRequestsByUser()
      const contexts = await Promise.all([newContext(), newContext()])
      try {
        const [alicePage, bobPage] = await Promise.all(contexts.map((context) => context.newPage()))
        await Promise.all([signInByField(alicePage!, "alice"), signInByHint(bobPage!, "bob")])
        const [aliceLibrary, bobLibrary] = await Promise.all([libraryOf("alice", 5), libraryOf("bob", 5)])
        expect(aliceLibrary).not.toEqual(bobLibrary)

        for (let round = 0; round < 3; round++) {
          await Promise.all([alicePage!.reload(), bobPage!.reload()])
          expect(await alicePage!.textContent("#user-id")).toBe("alice")
          expect(await bobPage!.textContent("#user-id")).toBe("bob")
          expect(await alicePage!.textContent("#header-user")).toBe("alice")
          expect(await shownTracks(alicePage!)).toEqual(aliceLibrary)
          expect(await shownTracks(bobPage!)).toEqual(bobLibrary)
          expect(await alicePage!.textContent("body")).not.toContain("bob")
          expect(await bobPage!.textContent("body")).not.toContain("alice")
        }
        expect(await alicePage!.textContent("#email")).toBe("alice@example.com")
        await alicePage!.screenshot({ path: join(SCREENSHOTS, "home-alice.png"), fullPage: true })
        await bobPage!.screenshot({ path: join(SCREENSHOTS, "home-bob.png"), fullPage: true })

        // the emulator saw the app's API requests with each user's own bearer (plus our libraryOf calls)
        const after = await emulator.apiRequestsByUser()
        const delta = (user: string) => (after[user] ?? 0) - (before[user] ?? 0)
        // /me at the callback, (me + tracks) on the first load and on 3 reloads, and libraryOf's request
        expect(delta("alice")).toBe(1 + 2 + 3 * 2 + 1)
        expect(delta("bob")).toBe(1 + 2 + 3 * 2 + 1)
        expect(
          Object.keys(after)
            .filter((user) => delta(user) > 0)
            .sort()
        ).toEqual(["alice", "bob"])

        // the session cookie is HttpOnly and SameSite=Lax, and holds nothing but a random id
        const [cookie] = await contexts[0]!.cookies(app.url)
        expect(cookie).toMatchObject({ name: "sid", httpOnly: true, sameSite: "Lax", path: "/" })
        expect(cookie!.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
      } finally {
        await Promise.all(contexts.map((context) => context.close()))
      }
    }, 60_000)

    it("the pages are usable: the welcome page, the consent page with its #user field", async () => {
      const context = await newContext()
      try {
        const page = await context.newPage()
        const response = await page.goto(app.url)
        expect(response!.status()).toBe(200)
        expect(response!.headers()["cache-control"]).toBe("no-store")
        expect(await page.textContent("#login")).toContain("Sign in")
        await page.screenshot({ path: join(SCREENSHOTS, "welcome.png") })
        await page.click("#login")
        await page.waitForSelector("#user")
        expect(page.url().startsWith(`${emulator.authUrl}/authorize?`)).toBe(true)
        const url = new URL(page.url())
        expect(url.searchParams.get("code_challenge_method")).toBe("S256")
        expect(url.searchParams.get("state")).toMatch(/.{20,}/)
        await page.screenshot({ path: join(SCREENSHOTS, "consent.png") })
      } finally {
        await context.close()
      }
    })

    it("a forged state is refused with a clear page, and the browser's own sign-in still completes", async () => {
      const context = await newContext()
      try {
        const page = await context.newPage()
        await page.goto(`${app.url}/login?login_hint=mallory-victim`)
        await page.waitForSelector("#approve")
        const response = await page.goto(`${app.url}/callback?code=forged-code&state=forged-state`)
        expect(response!.status()).toBe(400)
        expect(await errorCode(page)).toBe("state_mismatch")
        expect(await page.textContent("#error-title")).toBe("This sign-in response is not yours")
        await page.screenshot({ path: join(SCREENSHOTS, "error-state.png") })
        // a forged answer cancels nothing (else any site could cancel anyone's sign-in): the real answer completes it
        await page.goBack()
        await page.waitForSelector("#approve")
        await Promise.all([page.waitForURL(`${app.url}/`), page.click("#approve")])
        expect(await page.textContent("#user-id")).toBe("mallory-victim")
      } finally {
        await context.close()
      }
    })

    it("a replayed callback is refused: in the same browser, in a fresh one, and in one with its own sign-in", async () => {
      const victim = await newContext()
      const attacker = await newContext()
      try {
        const page = await victim.newPage()
        let callbackUrl: string | undefined
        page.on("request", (request) => {
          if (request.url().startsWith(`${app.url}/callback?`)) callbackUrl = request.url()
        })
        await signInByHint(page, "victor")
        expect(callbackUrl).toBeDefined()
        // the same browser replays its callback: refused, and the session stays signed in
        const again = await page.goto(callbackUrl!)
        expect(again!.status()).toBe(400)
        expect(await errorCode(page)).toBe("no_pending_sign_in")
        await page.goto(app.url)
        expect(await page.textContent("#user-id")).toBe("victor")

        // another browser with no sign-in of its own
        const other = await attacker.newPage()
        const replay = await other.goto(callbackUrl!)
        expect(replay!.status()).toBe(400)
        expect(await errorCode(other)).toBe("no_pending_sign_in")
        await other.screenshot({ path: join(SCREENSHOTS, "error-no-pending.png") })
        // another browser that started its own sign-in: the victim's state is not its state
        await other.goto(`${app.url}/login?login_hint=mallory`)
        await other.waitForSelector("#approve")
        const mixed = await other.goto(callbackUrl!)
        expect(mixed!.status()).toBe(400)
        expect(await errorCode(other)).toBe("state_mismatch")
        await other.goto(app.url)
        expect(await other.$("#user-id")).toBeNull()
      } finally {
        await victim.close()
        await attacker.close()
      }
    }, 60_000)

    it("a callback with no pending sign-in is refused with a clear page", async () => {
      const context = await newContext()
      try {
        const page = await context.newPage()
        const response = await page.goto(`${app.url}/callback?code=abc&state=def`)
        expect(response!.status()).toBe(400)
        expect(await errorCode(page)).toBe("no_pending_sign_in")
        expect(await page.textContent("#error-title")).toBe("No sign-in in progress")
        expect(await page.isVisible("#login")).toBe(true)
      } finally {
        await context.close()
      }
    })

    it("a tampered or unknown session cookie is refused with a clear page and cleared", async () => {
      const context = await newContext()
      try {
        const page = await context.newPage()
        await signInByHint(page, "trudy")
        const [cookie] = await context.cookies(app.url)
        const flipped = `${cookie!.value.slice(0, -1)}${cookie!.value.endsWith("A") ? "B" : "A"}`
        for (const value of [flipped, "not-a-session", `${cookie!.value}x`]) {
          await context.addCookies([{ ...cookie!, value }])
          const response = await page.goto(app.url)
          expect(response!.status(), value).toBe(401)
          expect(await errorCode(page)).toBe("session_invalid")
          expect(await page.textContent("#error-title")).toBe("Your session is not valid")
          expect(await page.textContent("body")).not.toContain("trudy")
          expect(await context.cookies(app.url)).toEqual([])
        }
        await page.screenshot({ path: join(SCREENSHOTS, "error-cookie.png") })
        // the untouched cookie still works
        await context.addCookies([cookie!])
        await page.goto(app.url)
        expect(await page.textContent("#user-id")).toBe("trudy")
      } finally {
        await context.close()
      }
    }, 60_000)

    it("denying on the consent page says the sign-in was cancelled", async () => {
      const context = await newContext()
      try {
        const page = await context.newPage()
        await page.goto(`${app.url}/login`)
        await page.waitForSelector("#deny")
        await Promise.all([page.waitForURL(/\/callback\?/), page.click("#deny")])
        expect(await errorCode(page)).toBe("access_denied")
        expect(await page.textContent("#error-title")).toBe("Sign-in cancelled")
      } finally {
        await context.close()
      }
    })

    it("another site cannot sign a user out or end their session: GET /logout, a form POST, a link to /login", async () => {
      // the attacker's pages, on a second loopback origin: `localhost` is another site than `127.0.0.1`, and another
      // port of 127.0.0.1 is the same site (Lax cookies go along) but another origin
      const attacker = Http.createServer((request, response) => {
        const target = `${app.url}${request.url === "/login" ? "/login" : "/logout"}`
        const body =
          request.url === "/post"
            ? `<form method="post" action="${target}"><button id="go" type="submit">win a prize</button></form>`
            : `<a id="go" href="${target}">win a prize</a>`
        response.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><body>${body}</body>`)
      })
      await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve))
      const port = (attacker.address() as AddressInfo).port
      const context = await newContext()
      try {
        const page = await context.newPage()
        await signInByHint(page, "victoria")
        const [cookie] = await context.cookies(app.url)
        const stillSignedIn = async (what: string) => {
          expect(await context.cookies(app.url), what).toEqual([cookie])
          await page.goto(app.url)
          expect(await page.textContent("#user-id"), what).toBe("victoria")
        }
        for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
          // a top-level GET navigation to /logout: a page with the button, nothing signed out
          await page.goto(`${origin}/get`)
          await Promise.all([page.waitForURL(`${app.url}/logout`), page.click("#go")])
          expect(await page.isVisible("#confirm-sign-out-button"), origin).toBe(true)
          await stillSignedIn(`GET /logout from ${origin}`)
          // a cross-origin form POST: refused, the cookie stays
          await page.goto(`${origin}/post`)
          const [response] = await Promise.all([page.waitForResponse(`${app.url}/logout`), page.click("#go")])
          expect(response.status(), origin).toBe(403)
          expect(await errorCode(page)).toBe("cross_site_sign_out")
          await stillSignedIn(`POST /logout from ${origin}`)
          // a navigation to /login: the signed-in session is kept
          await page.goto(`${origin}/login`)
          await Promise.all([page.waitForURL(`${app.url}/`), page.click("#go")])
          expect(await page.textContent("#user-id")).toBe("victoria")
          await stillSignedIn(`/login from ${origin}`)
        }
        // the app's own button still signs out
        await page.goto(`${app.url}/logout`)
        await Promise.all([page.waitForURL(`${app.url}/?signed-out`), page.click("#confirm-sign-out-button")])
        expect(await context.cookies(app.url)).toEqual([])
      } finally {
        await context.close()
        await new Promise((resolve) => attacker.close(resolve))
      }
    }, 60_000)

    it("logout forgets the user's tokens and clears the cookie; the other user stays signed in", async () => {
      const contexts = await Promise.all([newContext(), newContext()])
      try {
        const [oscar, peggy] = await Promise.all(contexts.map((context) => context.newPage()))
        await signInByField(oscar!, "oscar")
        await signInByField(peggy!, "peggy")
        const [oldCookie] = await contexts[0]!.cookies(app.url)
        await Promise.all([oscar!.waitForURL(`${app.url}/?signed-out`), oscar!.click("#sign-out")])
        expect(await oscar!.textContent("#notice")).toBe("You are signed out.")
        expect(await oscar!.isVisible("#login")).toBe(true)
        expect(await contexts[0]!.cookies(app.url)).toEqual([])
        await oscar!.screenshot({ path: join(SCREENSHOTS, "signed-out.png") })
        // the old cookie names no session any more
        await contexts[0]!.addCookies([oldCookie!])
        const replay = await oscar!.goto(app.url)
        expect(replay!.status()).toBe(401)
        expect(await errorCode(oscar!)).toBe("session_invalid")
        // peggy is untouched
        await peggy!.reload()
        expect(await peggy!.textContent("#user-id")).toBe("peggy")
        // and oscar can sign in again
        await signInByHint(oscar!, "oscar")
        expect(await oscar!.textContent("#user-id")).toBe("oscar")
      } finally {
        await Promise.all(contexts.map((context) => context.close()))
      }
    }, 60_000)
  })
})
