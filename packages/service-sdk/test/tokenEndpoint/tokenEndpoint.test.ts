import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { AuthenticationError, AuthorizationCode, ClientCredentials, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient, type RecordedRequest } from "@service-sdk/effect/testing"
import {
  AUTH_URL,
  authorizationCodeLayer,
  clientCredentialsLayer,
  credentials,
  numberedTokens,
  oauthError,
  REDIRECT_URI,
  requests,
  tokenResponse,
  value
} from "../fixtures.js"

const fetchOne = Effect.flatMap(TokenProvider, (provider) => provider.getAccessToken)

/** The body parameters in order, and a check that none is sent empty. */
const formEntries = (request: RecordedRequest) => {
  expect(request.body).not.toMatch(/(^|&)[^=&]*=(&|$)/)
  return [...request.form.entries()]
}

describe("token endpoint wire format", () => {
  it.effect("POSTs to {authUrl}/api/token with a form body and JSON accepted", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(request!.method).toBe("POST")
      expect(request!.url.href).toBe(`${AUTH_URL}/api/token`)
      expect(request!.headers["content-type"]).toBe("application/x-www-form-urlencoded")
      expect(request!.headers.accept).toBe("application/json")
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("keeps a path prefix of authUrl", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(request!.url.href).toBe("http://127.0.0.1:4010/prefix/accounts/api/token")
    }).pipe(
      Effect.provide(clientCredentialsLayer(numberedTokens(), { authUrl: "http://127.0.0.1:4010/prefix/accounts/" }))
    )
  )

  it.effect("Basic auth form-encodes id and secret before base64 (RFC 6749 §2.3.1)", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      const header = request!.headers.authorization!
      expect(header.startsWith("Basic ")).toBe(true)
      const decoded = Buffer.from(header.slice("Basic ".length), "base64").toString("utf8")
      // "a b:c+d" → "a+b%3Ac%2Bd"; "s/é=%" → "s%2F%C3%A9%3D%25"
      expect(decoded).toBe("a+b%3Ac%2Bd:s%2F%C3%A9%3D%25")
      const [id, secret] = decoded.split(":").map((part) => decodeURIComponent(part.replaceAll("+", " ")))
      expect(id).toBe("a b:c+d")
      expect(secret).toBe("s/é=%")
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { clientId: "a b:c+d", clientSecret: "s/é=%" })))
  )

  it.effect("Basic auth of hex credentials is plain base64 of id:secret", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(request!.headers.authorization).toBe(`Basic ${Buffer.from("0123abcd:cafe4567").toString("base64")}`)
    }).pipe(
      Effect.provide(clientCredentialsLayer(numberedTokens(), { clientId: "0123abcd", clientSecret: "cafe4567" }))
    )
  )

  it.effect("client_credentials without a scope sends grant_type only", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(formEntries(request!)).toEqual([["grant_type", "client_credentials"]])
      expect(request!.body).toBe("grant_type=client_credentials")
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("client_credentials sends the normalised scope when set", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(formEntries(request!)).toEqual([
        ["grant_type", "client_credentials"],
        ["scope", "playlist-read user-read-email"]
      ])
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { scope: ["playlist-read", "user-read-email"] })))
  )

  it.effect("an empty scope is not sent", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(request!.form.has("scope")).toBe(false)
      expect(formEntries(request!)).toEqual([["grant_type", "client_credentials"]])
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { scope: " , " })))
  )

  it.effect("authorization_code sends code and redirect_uri", () =>
    Effect.gen(function* () {
      const provider = yield* AuthorizationCode
      yield* provider.exchangeCode("the-code")
      const [request] = yield* requests
      expect(formEntries(request!)).toEqual([
        ["grant_type", "authorization_code"],
        ["code", "the-code"],
        ["redirect_uri", REDIRECT_URI]
      ])
      expect(request!.url.href).toBe(`${AUTH_URL}/api/token`)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "r-1" }), { scope: "a b" })))
  )

  it.effect("refresh_token sends the refresh token only", () =>
    Effect.gen(function* () {
      yield* fetchOne
      const [request] = yield* requests
      expect(formEntries(request!)).toEqual([
        ["grant_type", "refresh_token"],
        ["refresh_token", "boot-refresh"]
      ])
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens(), { refreshToken: "boot-refresh", scope: "a b" })))
  )

  it.effect("expiresAt is now (from the Clock) + expires_in, fractional allowed", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust("1000 seconds")
      const provider = yield* AuthorizationCode
      const token = yield* provider.exchangeCode("c")
      expect(token.expiresAt).toBe(1000 + 12.5)
      expect(value(token.accessToken)).toBe("tok-1")
      expect(token.refreshToken && value(token.refreshToken)).toBe("r")
      expect(token.scope).toBe("granted-scope")
    }).pipe(
      Effect.provide(
        authorizationCodeLayer(numberedTokens({ expires_in: 12.5, refresh_token: "r", scope: "granted-scope" }))
      )
    )
  )

  it.effect("token_type is case-insensitive and may be absent", () =>
    Effect.gen(function* () {
      const provider = yield* TokenProvider
      expect(value(yield* provider.getAccessToken)).toBe("lower")
      yield* TestClock.adjust("1 hour")
      expect(value(yield* provider.getAccessToken)).toBe("absent")
    }).pipe(
      Effect.provide(
        clientCredentialsLayer(
          MockHttpClient.script(
            tokenResponse("lower", { token_type: "bearer" }),
            MockHttpClient.json({ access_token: "absent", expires_in: 60 })
          )
        )
      )
    )
  )

  it.effect.each([
    [400, "invalid_grant", "Refresh token revoked"],
    [401, "invalid_client", "Invalid client secret"],
    [400, "invalid_scope", undefined]
  ] as const)("a %s %s is a final AuthenticationError with status and payload", ([status, error, description]) =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(fetchOne)
      expect(failure).toBeInstanceOf(AuthenticationError)
      const auth = failure as AuthenticationError
      expect(auth.status).toBe(status)
      expect(auth.payload).toEqual(description === undefined ? { error } : { error, error_description: description })
      expect(auth.message).toContain(error)
      expect(yield* requests).toHaveLength(1)
    }).pipe(Effect.provide(clientCredentialsLayer(() => oauthError(status, error, description), { maxRetries: 3 })))
  )

  it.effect("a 4xx without an OAuth body is an AuthenticationError without payload", () =>
    Effect.gen(function* () {
      const failure = (yield* Effect.flip(fetchOne)) as AuthenticationError
      expect(failure._tag).toBe("AuthenticationError")
      expect(failure.status).toBe(403)
      expect(failure.payload).toBeUndefined()
      expect(yield* requests).toHaveLength(1)
    }).pipe(Effect.provide(clientCredentialsLayer(() => ({ status: 403, body: "<html>Forbidden</html>" }))))
  )

  it.scoped("ClientCredentials.make builds the service on the given HttpClient", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make(credentials)
      expect(value(yield* provider.getAccessToken)).toBe("tok-1")
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )
})
