import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Emulator } from "../src/internal/effectApi.js"
import { approve, authorizeUrl, decide, REDIRECT_URI, request, requestIdOf, tokenRequest } from "./utils.js"

describe("authorize (consent page)", () => {
  it.scopedLive("shows a consent page listing the scopes with #approve and #deny", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const page = yield* request(authorizeUrl(emulator, { scope: "user-read-private user-library-read", state: "s1" }))
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toMatch(/^text\/html/)
      expect(page.headers.get("cache-control")).toBe("no-store")
      expect(page.text).toContain('data-scope="user-read-private"')
      expect(page.text).toContain('data-scope="user-library-read"')
      expect(page.text).toMatch(/<button id="approve"[^>]*>Approve<\/button>/) // the word the README and the CLI use
      expect(page.text).toMatch(/<button id="deny"[^>]*>/)
      expect(page.text).toContain('<form method="post" action="/authorize/decision">')
      expect(page.text).toContain("emulator-client")
    })
  )

  it.scopedLive("approve redirects (302) to the redirect URI with code and state", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const page = yield* request(authorizeUrl(emulator, { scope: "user-read-private", state: "xyz 123" }))
      const reply = yield* decide(emulator, requestIdOf(page.text), "approve")
      expect(reply.status).toBe(302)
      const location = new URL(reply.headers.get("location")!)
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
      expect(location.searchParams.get("state")).toBe("xyz 123")
      expect(location.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{32,}$/)
      // the consent request is answered: pressing again fails
      const again = yield* decide(emulator, requestIdOf(page.text), "approve")
      expect(again.status).toBe(400)
      expect(again.headers.get("location")).toBeNull()
    })
  )

  it.scopedLive("deny redirects with error=access_denied and the state, and no code", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const page = yield* request(authorizeUrl(emulator, { state: "abc" }))
      const reply = yield* decide(emulator, requestIdOf(page.text), "deny")
      expect(reply.status).toBe(302)
      const location = new URL(reply.headers.get("location")!)
      expect(location.searchParams.get("error")).toBe("access_denied")
      expect(location.searchParams.get("state")).toBe("abc")
      expect(location.searchParams.has("code")).toBe(false)
    })
  )

  it.scopedLive("the redirect keeps the redirect URI's own query parameters; no state → no state", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const reply = yield* request(authorizeUrl(emulator, { redirect_uri: "http://127.0.0.1:9000/cb?app=1" }))
      expect(reply.status).toBe(302)
      const location = new URL(reply.headers.get("location")!)
      expect(location.origin).toBe("http://127.0.0.1:9000")
      expect(location.searchParams.get("app")).toBe("1")
      expect(location.searchParams.has("state")).toBe(false)
      expect(location.searchParams.has("code")).toBe(true)
    })
  )

  it.scopedLive("autoApprove redirects at once, even with show_dialog=true, and the code works", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const reply = yield* request(
        authorizeUrl(emulator, { scope: "user-read-email", state: "st", show_dialog: "true" })
      )
      expect(reply.status).toBe(302)
      const location = new URL(reply.headers.get("location")!)
      expect(location.searchParams.get("state")).toBe("st")
      const token = yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code: location.searchParams.get("code")!,
        redirect_uri: REDIRECT_URI
      })
      expect(token.status).toBe(200)
      expect(token.json.scope).toBe("user-read-email")
    })
  )

  it.scopedLive("invalid redirect URIs get an HTML error page (400), never a redirect", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      for (const redirect_uri of [
        "https://127.0.0.1:8765/callback",
        "http://evil.example/callback",
        "http://127.0.0.1.evil.example/cb",
        "http://user@127.0.0.1:8765/cb",
        "http://127.0.0.1:8765/cb#frag",
        // the Service's rules since 2025-11-27: a loopback IP literal, never localhost
        "http://localhost:8765/callback",
        "http://localhost/cb",
        "not a url",
        ""
      ]) {
        const reply = yield* request(authorizeUrl(emulator, { redirect_uri }))
        expect(reply.status, redirect_uri).toBe(400)
        expect(reply.headers.get("location"), redirect_uri).toBeNull()
        expect(reply.headers.get("content-type")).toMatch(/^text\/html/)
      }
      for (const redirect_uri of ["http://[::1]:1234/cb", "http://127.0.0.1/cb", "http://127.0.0.1:1/"]) {
        const reply = yield* request(authorizeUrl(emulator, { redirect_uri }))
        expect(reply.status, redirect_uri).toBe(302)
      }
    })
  )

  it.scopedLive("unknown or missing client_id is an error page; registered redirect URIs are enforced", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({
        autoApprove: true,
        clients: [{ clientId: "strict", clientSecret: "s", redirectUris: ["http://127.0.0.1:5000/cb"] }]
      })
      const unknown = yield* request(authorizeUrl(emulator, { client_id: "nobody" }))
      expect(unknown.status).toBe(400)
      expect(unknown.text).toContain("invalid_client")
      const missing = yield* request(authorizeUrl(emulator, { client_id: "" }))
      expect(missing.status).toBe(400)
      const unregistered = yield* request(authorizeUrl(emulator, { client_id: "strict" }))
      expect(unregistered.status).toBe(400)
      const registered = yield* request(
        authorizeUrl(emulator, { client_id: "strict", redirect_uri: "http://127.0.0.1:5000/cb" })
      )
      expect(registered.status).toBe(302)
    })
  )

  it.scopedLive(
    "the Service's redirect URI rules: localhost named in the error; a loopback URI registered without a port matches any port",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make({
          autoApprove: true,
          clients: [
            { clientId: "cli", clientSecret: "s", redirectUris: ["http://127.0.0.1/callback"] },
            { clientId: "web", clientSecret: "s", redirectUris: ["https://app.example/callback"] }
          ]
        })
        const localhost = yield* request(authorizeUrl(emulator, { redirect_uri: "http://localhost:8765/callback" }))
        expect(localhost.status).toBe(400)
        expect(localhost.text).toContain("localhost is not allowed")
        for (const port of [1234, 50_000]) {
          const reply = yield* request(
            authorizeUrl(emulator, { client_id: "cli", redirect_uri: `http://127.0.0.1:${port}/callback` })
          )
          expect(reply.status).toBe(302)
          expect(new URL(reply.headers.get("location")!).port).toBe(String(port))
        }
        for (const redirect_uri of ["http://127.0.0.1:1234/other", "http://[::1]:1234/callback"]) {
          const reply = yield* request(authorizeUrl(emulator, { client_id: "cli", redirect_uri }))
          expect(reply.status, redirect_uri).toBe(400)
        }
        // an https URI is registered exactly: no port wildcard off loopback
        const web = yield* request(
          authorizeUrl(emulator, { client_id: "web", redirect_uri: "https://app.example:444/callback" })
        )
        expect(web.status).toBe(400)
        const bad = yield* Effect.either(
          Emulator.make({ clients: [{ clientId: "x", clientSecret: "s", redirectUris: ["http://localhost/cb"] }] })
        )
        expect(bad._tag).toBe("Left")
        if (bad._tag === "Left") expect(bad.left.message).toContain("localhost")
      })
  )

  it.scopedLive("bad response_type or scope redirect with the OAuth error and state (RFC 6749 §4.1.2.1)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* request(authorizeUrl(emulator, { response_type: "token", state: "s" }))
      expect(token.status).toBe(302)
      const location = new URL(token.headers.get("location")!)
      expect(location.searchParams.get("error")).toBe("unsupported_response_type")
      expect(location.searchParams.get("state")).toBe("s")
      const scope = yield* request(authorizeUrl(emulator, { scope: "root" }))
      expect(new URL(scope.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope")
    })
  )

  it.scopedLive("escapes HTML: hostile input never becomes markup", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({
        clients: [{ clientId: "<script>alert(1)</script>", clientSecret: "x" }]
      })
      const page = yield* request(authorizeUrl(emulator, { client_id: "<script>alert(1)</script>" }))
      expect(page.status).toBe(200)
      expect(page.text).not.toContain("<script>")
      expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
      const error = yield* request(authorizeUrl(emulator, { redirect_uri: '"><img src=x onerror=alert(1)>' }))
      expect(error.status).toBe(400)
      expect(error.text).not.toContain("<img")
    })
  )

  it.scopedLive("the decision endpoint: POST form only, unknown request, bad decision", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const get = yield* request(`${emulator.authUrl}/authorize/decision`)
      expect(get.status).toBe(405)
      const unknown = yield* decide(emulator, "nope", "approve")
      expect(unknown.status).toBe(400)
      const page = yield* request(authorizeUrl(emulator, {}))
      const bad = yield* decide(emulator, requestIdOf(page.text), "maybe")
      expect(bad.status).toBe(400)
      expect(bad.headers.get("location")).toBeNull()
      const post = yield* request(`${emulator.authUrl}/authorize`, { method: "POST" })
      expect(post.status).toBe(405)
    })
  )

  // the server runs on the test's clock: TestClock moves code expiry without waiting
  it.scoped("codes expire after 10 minutes (TestClock)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const fresh = (yield* approve(emulator)).searchParams.get("code")!
      const stale = (yield* approve(emulator)).searchParams.get("code")!
      yield* TestClock.adjust("9 minutes")
      const ok = yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code: fresh,
        redirect_uri: REDIRECT_URI
      })
      expect(ok.status).toBe(200)
      yield* TestClock.adjust("1 minute")
      const expired = yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code: stale,
        redirect_uri: REDIRECT_URI
      })
      expect(expired.status).toBe(400)
      expect(expired.json).toEqual({ error: "invalid_grant", error_description: "Authorization code expired" })
    })
  )

  it.scoped("consent requests expire after 10 minutes too (TestClock)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const page = yield* request(authorizeUrl(emulator, {}))
      yield* TestClock.adjust("11 minutes")
      const reply = yield* decide(emulator, requestIdOf(page.text), "approve")
      expect(reply.status).toBe(400)
    })
  )
})
