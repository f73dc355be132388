/** The token endpoint's wire format (DESIGN section 4): Basic client authentication, form bodies, public clients. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { OAuthClient } from "@service-sdk/effect"
import { AUTH_URL, CLIENT_ID, CLIENT_SECRET, credentials, issuing, mock, requests } from "../support/mock.js"

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`

describe("token endpoint wire format", () => {
  it.effect("client credentials: POST {authUrl}/api/token, Basic auth, grant_type and normalised scope", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...credentials, scope: ["a", "b,c"] })
      const token = yield* oauth.clientCredentials()
      assert.strictEqual(Redacted.value(token.accessToken), "token-1")
      const [request] = yield* requests
      assert.strictEqual(request!.method, "POST")
      assert.strictEqual(request!.url.href, `${AUTH_URL}/api/token`)
      assert.strictEqual(request!.headers.authorization, basic(CLIENT_ID, CLIENT_SECRET))
      assert.strictEqual(request!.headers["content-type"], "application/x-www-form-urlencoded")
      assert.deepStrictEqual(Object.fromEntries(request!.form), { grant_type: "client_credentials", scope: "a b c" })
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("RFC 6749 §2.3.1: id and secret are form-encoded before base64", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ clientId: "id:1", clientSecret: "s e+cret", authUrl: AUTH_URL })
      yield* oauth.clientCredentials()
      const [request] = yield* requests
      assert.strictEqual(request!.headers.authorization, basic("id%3A1", "s+e%2Bcret"))
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("authorization code with PKCE: code, redirect_uri, code_verifier; no empty parameter", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...credentials, redirectUri: "http://127.0.0.1:8080/callback" })
      yield* oauth.exchangeCode("the-code", { codeVerifier: "v".repeat(43) })
      const [request] = yield* requests
      assert.deepStrictEqual(Object.fromEntries(request!.form), {
        grant_type: "authorization_code",
        code: "the-code",
        redirect_uri: "http://127.0.0.1:8080/callback",
        code_verifier: "v".repeat(43)
      })
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "rt-1" }))))
  )

  it.effect("refresh: grant_type=refresh_token; a response without refresh_token keeps the one sent", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make(credentials)
      const token = yield* oauth.refresh("rt-old")
      const [request] = yield* requests
      assert.deepStrictEqual(Object.fromEntries(request!.form), {
        grant_type: "refresh_token",
        refresh_token: "rt-old"
      })
      assert.strictEqual(Redacted.value(token.refreshToken!), "rt-old")
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("a public client: no Authorization header, client_id in the body, PKCE required", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({
        clientId: "public-app",
        publicClient: true,
        authUrl: AUTH_URL,
        redirectUri: "http://127.0.0.1:8080/cb"
      })
      const refused = yield* Effect.flip(oauth.exchangeCode("code"))
      assert.strictEqual(refused._tag, "ConfigurationError")
      assert.match(refused.message, /public clients must use PKCE/)
      yield* oauth.exchangeCode("code", { codeVerifier: "w".repeat(43) })
      const all = yield* requests
      assert.strictEqual(all.length, 1)
      assert.strictEqual(all[0]!.headers.authorization, undefined)
      assert.strictEqual(all[0]!.form.get("client_id"), "public-app")
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "rt" }))))
  )

  it.effect("expiresAt is now + expires_in from the Effect Clock", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make(credentials)
      const token = yield* oauth.clientCredentials()
      // TestClock starts at 0
      assert.strictEqual(token.expiresAt, 3600)
    }).pipe(Effect.provide(mock(issuing())))
  )
})
