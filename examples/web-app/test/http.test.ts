import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenStore } from "@service-sdk/effect"
import { errorCodeOf, get, setCookieOf, signIn, startApp } from "./support/flow.js"

describe("web app over HTTP (memory store)", () => {
  it.scopedLive(
    "login: a new HttpOnly SameSite=Lax session cookie, and a 302 to the consent page with state and PKCE",
    () =>
      Effect.gen(function* () {
        const { app, emulator } = yield* startApp()
        const login = yield* get(`${app.url}/login`)
        expect(login.status).toBe(302)
        const location = new URL(login.headers.get("location")!)
        expect(`${location.origin}${location.pathname}`).toBe(`${emulator.authUrl}/authorize`)
        expect(location.searchParams.get("redirect_uri")).toBe(`${app.url}/callback`)
        expect(location.searchParams.get("code_challenge_method")).toBe("S256")
        expect(location.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(location.searchParams.get("state")!.length).toBeGreaterThanOrEqual(32)
        expect(location.searchParams.has("login_hint")).toBe(false)
        const header = login.headers.getSetCookie()[0]!
        expect(header).toMatch(/^sid=[A-Za-z0-9_-]{43}; /)
        expect(header).toContain("HttpOnly")
        expect(header).toContain("SameSite=Lax")
        expect(header).toContain("Path=/")
        // neither the state nor the verifier is in the cookie or the page: only a random id
        expect(header).not.toContain(location.searchParams.get("state")!)
        // every login is a new session and a new state
        const again = yield* get(`${app.url}/login`)
        expect(setCookieOf(again)).not.toBe(setCookieOf(login))
        expect(new URL(again.headers.get("location")!).searchParams.get("state")).not.toBe(
          location.searchParams.get("state")
        )
      })
  )

  it.scopedLive("login_hint is passed on when it is a user id, refused with a page when not", () =>
    Effect.gen(function* () {
      const { app } = yield* startApp()
      const hinted = yield* get(`${app.url}/login?login_hint=alice_1`)
      expect(new URL(hinted.headers.get("location")!).searchParams.get("login_hint")).toBe("alice_1")
      const bad = yield* get(`${app.url}/login?login_hint=${encodeURIComponent("<x>")}`)
      expect(bad.status).toBe(400)
      expect(errorCodeOf(bad.text)).toBe("invalid_login_hint")
      expect(bad.text).not.toContain("<x>")
    })
  )

  it.scopedLive("callback: a fresh session id once signed in; the home page shows the user's profile", () =>
    Effect.gen(function* () {
      const { app } = yield* startApp()
      const alice = yield* signIn(app.url, "alice")
      expect(alice.callback.headers.get("location")).toBe("/")
      expect(alice.cookie).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(alice.cookie).not.toBe(alice.pendingCookie)
      const home = yield* get(app.url, alice.cookie)
      expect(home.status).toBe(200)
      expect(home.headers.get("cache-control")).toBe("no-store")
      expect(home.text).toContain('<dd id="user-id">alice</dd>')
      // the pending cookie is not a session
      expect((yield* get(app.url, alice.pendingCookie)).status).toBe(401)
    })
  )

  it.scopedLive("the user's data comes with the user's own bearer: /me answers their id", () =>
    Effect.gen(function* () {
      const { app, emulator } = yield* startApp()
      const users = ["u1", "u2", "u3", "u4"]
      const cookies = yield* Effect.forEach(users, (user) => signIn(app.url, user), { concurrency: "unbounded" })
      const before = yield* emulator.apiRequestsByUser
      const pages = yield* Effect.forEach([...cookies, ...cookies], (signedIn) => get(app.url, signedIn.cookie), {
        concurrency: "unbounded"
      })
      pages.forEach((page, index) => {
        expect(page.status).toBe(200)
        expect(page.text).toContain(`<dd id="user-id">${users[index % users.length]}</dd>`)
      })
      const after = yield* emulator.apiRequestsByUser
      for (const user of users) expect((after[user] ?? 0) - (before[user] ?? 0)).toBe(4) // 2 pages × (me + tracks)
    })
  )

  it.scopedLive("logout: a same-origin POST forgets the user's tokens and session and clears the cookie", () =>
    Effect.gen(function* () {
      const { app } = yield* startApp()
      const alice = yield* signIn(app.url, "alice")
      const out = yield* get(`${app.url}/logout`, alice.cookie, { method: "POST", headers: { origin: app.url } })
      expect(out.status).toBe(303)
      expect(out.headers.get("location")).toBe("/?signed-out")
      expect(setCookieOf(out)).toBe("")
      expect(out.headers.getSetCookie()[0]).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/)
      expect((yield* get(app.url, alice.cookie)).status).toBe(401)
      // Sec-Fetch-Site: same-origin is enough (a browser's own form)
      const bob = yield* signIn(app.url, "bob")
      const viaFetchSite = yield* get(`${app.url}/logout`, bob.cookie, {
        method: "POST",
        headers: { "sec-fetch-site": "same-origin" }
      })
      expect(viaFetchSite.status).toBe(303)
      expect(errorCodeOf((yield* get(app.url, bob.cookie)).text)).toBe("session_invalid")
      // signed out without a session: still a clean redirect
      expect(
        (yield* get(`${app.url}/logout`, undefined, { method: "POST", headers: { origin: app.url } })).status
      ).toBe(303)
    })
  )

  it.scopedLive("logout from another site, by GET or by a request without Origin, changes nothing", () =>
    Effect.gen(function* () {
      const { app, emulator } = yield* startApp()
      const alice = yield* signIn(app.url, "alice")
      const otherOrigin = app.url.replace("127.0.0.1", "localhost")
      const attempts: ReadonlyArray<RequestInit> = [
        { method: "GET" },
        { method: "POST", headers: { origin: "http://127.0.0.1:1" } },
        { method: "POST", headers: { origin: otherOrigin } },
        { method: "POST", headers: { origin: "null" } },
        { method: "POST", headers: { "sec-fetch-site": "cross-site", origin: app.url } },
        { method: "POST", headers: { "sec-fetch-site": "same-site" } },
        { method: "POST", headers: { "sec-fetch-site": "none" } },
        { method: "POST" }
      ]
      for (const init of attempts) {
        const reply = yield* get(`${app.url}/logout`, alice.cookie, init)
        const what = JSON.stringify(init)
        expect(reply.status, what).toBe(init.method === "GET" ? 200 : 403)
        if (init.method !== "GET") expect(errorCodeOf(reply.text), what).toBe("cross_site_sign_out")
        // the cookie is neither cleared nor replaced
        expect(setCookieOf(reply), what).toBeUndefined()
        expect((yield* get(app.url, alice.cookie)).text, what).toContain('<dd id="user-id">alice</dd>')
      }
      // the GET page offers the button, which posts to /logout
      const page = yield* get(`${app.url}/logout`, alice.cookie)
      expect(page.text).toContain('<form method="post" action="/logout">')
      // and alice's tokens are still there: her page works with no new sign-in
      const signIns = (yield* emulator.stats).tokenRequests.authorization_code
      expect((yield* get(app.url, alice.cookie)).status).toBe(200)
      expect((yield* emulator.stats).tokenRequests.authorization_code).toBe(signIns)
    })
  )

  it.scopedLive("/login for a signed-in session keeps it: back to the home page, nothing removed", () =>
    Effect.gen(function* () {
      const { app } = yield* startApp()
      const alice = yield* signIn(app.url, "alice")
      for (const path of ["/login", "/login?login_hint=mallory"]) {
        const reply = yield* get(`${app.url}${path}`, alice.cookie)
        expect(reply.status, path).toBe(303)
        expect(reply.headers.get("location"), path).toBe("/")
        expect(setCookieOf(reply), path).toBeUndefined()
      }
      expect((yield* get(app.url, alice.cookie)).text).toContain('<dd id="user-id">alice</dd>')
    })
  )

  it.scopedLive(
    "an error callback without this browser's state cancels nothing and shows none of its text; the sign-in completes",
    () =>
      Effect.gen(function* () {
        const { app } = yield* startApp()
        const login = yield* get(`${app.url}/login?login_hint=carol`)
        const pending = setCookieOf(login)!
        const consent = yield* get(login.headers.get("location")!)
        const callbackUrl = consent.headers.get("location")!
        const canary = "ATTACKER-TEXT-canary"
        for (const forged of [
          `/callback?error=${canary}`,
          `/callback?error=access_denied&error_description=${canary}`,
          `/callback?error=${canary}&state=wrong-state`,
          `/callback?code=forged-code&state=wrong-state`,
          "/callback?code=forged-code"
        ]) {
          const reply = yield* get(`${app.url}${forged}`, pending)
          expect(reply.status, forged).toBe(400)
          expect(errorCodeOf(reply.text), forged).toBe("state_mismatch")
          expect(reply.text, forged).not.toContain(canary)
          expect(setCookieOf(reply), forged).toBeUndefined()
        }
        // the real answer still finds its sign-in
        const callback = yield* get(callbackUrl, pending)
        expect(callback.status).toBe(303)
        expect((yield* get(app.url, setCookieOf(callback)!)).text).toContain('<dd id="user-id">carol</dd>')
      })
  )

  it.scopedLive("an error callback with the right state ends the sign-in; unknown error text is not shown", () =>
    Effect.gen(function* () {
      const { app } = yield* startApp()
      const login = yield* get(`${app.url}/login`)
      const pending = setCookieOf(login)!
      const state = new URL(login.headers.get("location")!).searchParams.get("state")!
      const reply = yield* get(
        `${app.url}/callback?error=weird-canary-text&state=${encodeURIComponent(state)}`,
        pending
      )
      expect(reply.status).toBe(400)
      expect(errorCodeOf(reply.text)).toBe("authorization_error")
      expect(reply.text).not.toContain("weird-canary-text")
      expect(reply.text).toContain("unknown error")
      expect(setCookieOf(reply)).toBe("")
      // answered once
      expect(errorCodeOf((yield* get(`${app.url}/callback?error=server_error&state=${state}`, pending)).text)).toBe(
        "no_pending_sign_in"
      )
    })
  )

  it.scopedLive("a user whose tokens the Service revoked sees 'sign in again'; other users are unaffected", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const { app, emulator } = yield* startApp({ tokenStore: store })
      const alice = yield* signIn(app.url, "alice")
      const bob = yield* signIn(app.url, "bob")
      const aliceToken = Option.getOrThrow(yield* store("alice").get)
      yield* emulator.revoke(Redacted.value(aliceToken.refreshToken!))
      const alicePage = yield* get(app.url, alice.cookie)
      expect(alicePage.status).toBe(401)
      expect(errorCodeOf(alicePage.text)).toBe("signed_out")
      expect(setCookieOf(alicePage)).toBe("")
      expect((yield* get(app.url, bob.cookie)).text).toContain('<dd id="user-id">bob</dd>')
      // and alice can sign in again
      const again = yield* signIn(app.url, "alice")
      expect((yield* get(app.url, again.cookie)).text).toContain('<dd id="user-id">alice</dd>')
    })
  )

  it.scopedLive("unknown paths get a 404 page; no page leaks a token", () =>
    Effect.gen(function* () {
      const { app } = yield* startApp()
      const missing = yield* get(`${app.url}/nope`)
      expect(missing.status).toBe(404)
      expect(errorCodeOf(missing.text)).toBe("not_found")
      const alice = yield* signIn(app.url, "alice")
      const home = yield* get(app.url, alice.cookie)
      const code = new URL(alice.callbackUrl).searchParams.get("code")!
      expect(home.text).not.toContain(code)
    })
  )
})
