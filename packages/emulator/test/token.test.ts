import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Emulator } from "../src/internal/effectApi.js"
import { approve, basic, form, REDIRECT_URI, request, tokenRequest, userToken } from "./utils.js"

describe("token endpoint", () => {
  it.scopedLive("client credentials with Basic auth: an app token, no refresh token, no-store", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* tokenRequest(emulator, { grant_type: "client_credentials", scope: "user-read-private" })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("cache-control")).toBe("no-store")
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
      expect(reply.json).toEqual({
        access_token: expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/),
        token_type: "Bearer",
        expires_in: 3600,
        scope: "user-read-private"
      })
      expect(reply.json).not.toHaveProperty("refresh_token")
    })
  )

  it.scopedLive("client credentials with client_id and client_secret in the body", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* tokenRequest(
        emulator,
        { grant_type: "client_credentials", client_id: "emulator-client", client_secret: "emulator-secret" },
        null
      )
      expect(reply.status).toBe(200)
      expect(reply.json.scope).toBe("")
    })
  )

  it.scopedLive("Basic credentials are form-decoded after base64 (RFC 6749 §2.3.1)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ clients: [{ clientId: "my app", clientSecret: "s3cr:t+%&é" }] })
      const ok = yield* tokenRequest(emulator, { grant_type: "client_credentials" }, basic("my app", "s3cr:t+%&é"))
      expect(ok.status).toBe(200)
      // the raw (not form-encoded) secret is a different secret
      const raw = `Basic ${Buffer.from("my app:s3cr:t+%&é").toString("base64")}`
      const bad = yield* tokenRequest(emulator, { grant_type: "client_credentials" }, raw)
      expect(bad.status).toBe(401)
    })
  )

  it.scopedLive("a wrong secret is 401 invalid_client with WWW-Authenticate", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* tokenRequest(
        emulator,
        { grant_type: "client_credentials" },
        basic("emulator-client", "nope")
      )
      expect(reply.status).toBe(401)
      expect(reply.json).toEqual({ error: "invalid_client", error_description: "Invalid client secret" })
      expect(reply.headers.get("www-authenticate")).toMatch(/^Basic realm=/)
      const unknown = yield* tokenRequest(emulator, { grant_type: "client_credentials" }, basic("who", "x"))
      expect(unknown.status).toBe(401)
      expect(unknown.json.error).toBe("invalid_client")
      const none = yield* tokenRequest(emulator, { grant_type: "client_credentials" }, null)
      expect(none.status).toBe(401)
      expect(none.json.error).toBe("invalid_client")
      const bodySecret = yield* tokenRequest(
        emulator,
        { grant_type: "client_credentials", client_id: "emulator-client", client_secret: "nope" },
        null
      )
      expect(bodySecret.status).toBe(401)
    })
  )

  it.scopedLive("two client authentication methods at once are invalid_request", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* tokenRequest(emulator, {
        grant_type: "client_credentials",
        client_id: "emulator-client",
        client_secret: "emulator-secret"
      })
      expect(reply.status).toBe(400)
      expect(reply.json.error).toBe("invalid_request")
    })
  )

  it.scopedLive("missing or unknown grant_type, unknown scope, repeated parameters", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const missing = yield* tokenRequest(emulator, {})
      expect(missing.status).toBe(400)
      expect(missing.json.error).toBe("invalid_request")
      const unknown = yield* tokenRequest(emulator, { grant_type: "password" })
      expect(unknown.status).toBe(400)
      expect(unknown.json.error).toBe("unsupported_grant_type")
      const scope = yield* tokenRequest(emulator, {
        grant_type: "client_credentials",
        scope: "user-read-private admin"
      })
      expect(scope.status).toBe(400)
      expect(scope.json).toEqual({ error: "invalid_scope", error_description: "Invalid scope: admin" })
      const repeated = yield* request(`${emulator.authUrl}/api/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: basic(emulator.clientId, emulator.clientSecret)
        },
        body: "grant_type=client_credentials&grant_type=refresh_token"
      })
      expect(repeated.status).toBe(400)
      expect(repeated.json.error).toBe("invalid_request")
    })
  )

  it.scopedLive("only form bodies and POST: JSON is 400 invalid_request, GET is 405", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const asJson = yield* request(`${emulator.authUrl}/api/token`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: basic(emulator.clientId, emulator.clientSecret) },
        body: JSON.stringify({ grant_type: "client_credentials" })
      })
      expect(asJson.status).toBe(400)
      expect(asJson.json.error).toBe("invalid_request")
      const broken = yield* request(`${emulator.authUrl}/api/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: basic(emulator.clientId, emulator.clientSecret)
        },
        body: "grant_type=client_credentials&scope=%zz"
      })
      expect(broken.status).toBe(400)
      const get = yield* request(`${emulator.authUrl}/api/token`)
      expect(get.status).toBe(405)
      expect(get.headers.get("allow")).toBe("POST")
      // and the server is still fine
      const ok = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(ok.status).toBe(200)
    })
  )

  it.scopedLive("authorization code: a user token with a refresh token and the approved scope", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* userToken(emulator, "user-read-private user-read-email")
      expect(token).toEqual({
        access_token: expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/),
        token_type: "Bearer",
        expires_in: 3600,
        scope: "user-read-private user-read-email",
        refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/)
      })
      expect(token.access_token).not.toBe(token.refresh_token)
    })
  )

  it.scopedLive("codes are single use: a second exchange is invalid_grant and revokes the first tokens", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const code = (yield* approve(emulator, { scope: "user-read-private" })).searchParams.get("code")!
      const params = { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI }
      const first = yield* tokenRequest(emulator, params)
      expect(first.status).toBe(200)
      const second = yield* tokenRequest(emulator, params)
      expect(second.status).toBe(400)
      expect(second.json.error).toBe("invalid_grant")
      const me = yield* request(`${emulator.apiUrl}/me`, {
        headers: { authorization: `Bearer ${first.json.access_token}` }
      })
      expect(me.status).toBe(401)
    })
  )

  it.scopedLive("codes are bound to their redirect URI and client; code and redirect_uri are required", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ clients: [{ clientId: "other", clientSecret: "other-secret" }] })
      const code = (yield* approve(emulator)).searchParams.get("code")!
      const wrongRedirect = yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code,
        redirect_uri: "http://127.0.0.1:8765/other"
      })
      expect(wrongRedirect.status).toBe(400)
      expect(wrongRedirect.json.error).toBe("invalid_grant")
      const otherClient = yield* tokenRequest(
        emulator,
        { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI },
        basic("other", "other-secret")
      )
      expect(otherClient.json.error).toBe("invalid_grant")
      const noRedirect = yield* tokenRequest(emulator, { grant_type: "authorization_code", code })
      expect(noRedirect.status).toBe(400)
      expect(noRedirect.json.error).toBe("invalid_request")
      const noCode = yield* tokenRequest(emulator, { grant_type: "authorization_code", redirect_uri: REDIRECT_URI })
      expect(noCode.json.error).toBe("invalid_request")
      const unknown = yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code: "not-a-code",
        redirect_uri: REDIRECT_URI
      })
      expect(unknown.json.error).toBe("invalid_grant")
      // failed attempts do not burn the code
      const ok = yield* tokenRequest(emulator, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI })
      expect(ok.status).toBe(200)
    })
  )

  it.scopedLive("refresh: no refresh_token in the response by default, and the old one keeps working", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* userToken(emulator, "user-library-read")
      const first = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: token.refresh_token })
      expect(first.status).toBe(200)
      expect(first.json).not.toHaveProperty("refresh_token")
      expect(first.json.scope).toBe("user-library-read")
      expect(first.json.access_token).not.toBe(token.access_token)
      const again = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: token.refresh_token })
      expect(again.status).toBe(200)
    })
  )

  it.scopedLive("rotateRefreshTokens: a new refresh token each time; replaying the old one is invalid_grant", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ rotateRefreshTokens: true })
      const token = yield* userToken(emulator, "user-library-read")
      const first = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: token.refresh_token })
      expect(first.status).toBe(200)
      expect(first.json.refresh_token).toMatch(/^[A-Za-z0-9_-]{32,}$/)
      expect(first.json.refresh_token).not.toBe(token.refresh_token)
      const replay = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: token.refresh_token })
      expect(replay.status).toBe(400)
      expect(replay.json.error).toBe("invalid_grant")
      const next = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: first.json.refresh_token
      })
      expect(next.status).toBe(200)
    })
  )

  it.scopedLive("refresh: unknown token, other client, missing parameter, widened scope", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ clients: [{ clientId: "other", clientSecret: "other-secret" }] })
      const token = yield* userToken(emulator, "user-library-read user-read-email")
      const unknown = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: "nope" })
      expect(unknown.json.error).toBe("invalid_grant")
      const other = yield* tokenRequest(
        emulator,
        { grant_type: "refresh_token", refresh_token: token.refresh_token },
        basic("other", "other-secret")
      )
      expect(other.json.error).toBe("invalid_grant")
      const missing = yield* tokenRequest(emulator, { grant_type: "refresh_token" })
      expect(missing.json.error).toBe("invalid_request")
      const wider = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: token.refresh_token,
        scope: "user-library-read user-library-modify"
      })
      expect(wider.json.error).toBe("invalid_scope")
      const narrower = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: token.refresh_token,
        scope: "user-read-email"
      })
      expect(narrower.status).toBe(200)
      expect(narrower.json.scope).toBe("user-read-email")
    })
  )

  it.scopedLive("tokenLifetime option sets expires_in", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 120 })
      const reply = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(reply.json.expires_in).toBe(120)
    })
  )

  it.scopedLive("tokenLatencyMs delays token responses", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLatencyMs: 150 })
      const started = performance.now()
      const reply = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(reply.status).toBe(200)
      expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    })
  )

  it.scopedLive("form bodies are URL-decoded (scope with + and %20)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* request(`${emulator.authUrl}/api/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" },
        body: `${form({ grant_type: "client_credentials", client_id: "emulator-client", client_secret: "emulator-secret" })}&scope=user-read-private+user-read-email%20user-read-private`
      })
      expect(reply.status).toBe(200)
      expect(reply.json.scope).toBe("user-read-private user-read-email")
    })
  )
})
