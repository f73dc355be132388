import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { AuthenticationError, AuthorizationCode, TokenCache, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient, type MockResponse } from "@service-sdk/effect/testing"
import { authorizationCodeLayer, expectTokenRequests, requests, setHandler, tokenResponse, value } from "../fixtures.js"

const raw = (body: string, contentType = "application/json"): MockResponse => ({
  status: 200,
  headers: { "content-type": contentType },
  body
})

const tokenBodyWith = (accessToken: string) => ({ access_token: accessToken, token_type: "Bearer", expires_in: 3600 })

const malformedResponses: ReadonlyArray<readonly [string, MockResponse]> = [
  ["a non-JSON 2xx (HTML)", raw("<html><body>tok-canary-html</body></html>", "text/html")],
  ["truncated JSON", raw('{"access_token":"tok-truncated","token_type":"Bearer","expires_in":36')],
  ["a JSON array", MockHttpClient.json([{ access_token: "x", expires_in: 3600 }])],
  ["a missing access_token", MockHttpClient.json({ token_type: "Bearer", expires_in: 3600 })],
  ["an empty access_token", MockHttpClient.json({ access_token: "", token_type: "Bearer", expires_in: 3600 })],
  ["a numeric access_token", MockHttpClient.json({ access_token: 42, token_type: "Bearer", expires_in: 3600 })],
  ["a string expires_in", MockHttpClient.json({ access_token: "x", token_type: "Bearer", expires_in: "3600" })],
  ["a negative expires_in", MockHttpClient.json({ access_token: "x", token_type: "Bearer", expires_in: -1 })],
  ["a non-finite expires_in", raw('{"access_token":"x","token_type":"Bearer","expires_in":1e999}')],
  ["a missing expires_in", MockHttpClient.json({ access_token: "x", token_type: "Bearer" })],
  ["a non-bearer token_type", MockHttpClient.json({ access_token: "x", token_type: "mac", expires_in: 3600 })],
  ["an empty 200", { status: 200 }],
  // RFC 6750 §2.1: tokens are visible ASCII; terminal escapes, CR/LF, spaces and non-ASCII are not tokens
  ["an access_token with a terminal title escape", MockHttpClient.json(tokenBodyWith("tok\u001b]0;pwned\u0007"))],
  ["an access_token with a clear-screen escape", MockHttpClient.json(tokenBodyWith("\u001b[2Jtok"))],
  ["an access_token with CR/LF", MockHttpClient.json(tokenBodyWith("tok\r\nX-Injected: 1"))],
  ["an access_token with a space", MockHttpClient.json(tokenBodyWith("tok en"))],
  ["an access_token with non-ASCII", MockHttpClient.json(tokenBodyWith("tök\u202E"))],
  [
    "a refresh_token with control characters",
    MockHttpClient.json({ ...tokenBodyWith("tok-ok"), refresh_token: "refresh\u001b[2J" })
  ]
]

describe("token characters", () => {
  it.effect("visible ASCII tokens (b64token, JWT) are accepted; others never reach the cache or a message", () =>
    Effect.gen(function* () {
      const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl-_~+/=="
      const provider = yield* AuthorizationCode
      yield* setHandler(() => tokenResponse(jwt, { refresh_token: "r~+/._-=" }))
      const token = yield* provider.exchangeCode("code")
      expect(value(token.accessToken)).toBe(jwt)
      yield* TestClock.adjust("1 hour")
      const canary = "canary\u001b]0;title\u0007secret"
      yield* setHandler(() => tokenResponse(canary))
      const error = yield* Effect.flip(provider.getAccessToken)
      expect(error._tag).toBe("AuthenticationError")
      expect(error.message).toContain("access_token is not visible ASCII")
      expect(JSON.stringify(error)).not.toContain("canary")
      expect(String(error)).not.toContain("canary")
      // not retried as a transport failure
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(authorizationCodeLayer(() => tokenResponse("unused"))))
  )
})

describe("malformed token responses", () => {
  it.effect.each(malformedResponses)(
    "%s is an AuthenticationError; the previous token and refresh token stay cached; the next call works",
    ([, malformed]) =>
      Effect.gen(function* () {
        const cache = yield* TokenCache.memory()
        yield* Effect.gen(function* () {
          const provider = yield* AuthorizationCode
          yield* provider.exchangeCode("code")
          yield* TestClock.adjust("1 hour")

          yield* setHandler(() => malformed)
          const error = yield* Effect.flip(provider.getAccessToken)
          expect(error).toBeInstanceOf(AuthenticationError)
          const auth = error as AuthenticationError
          expect(auth.status).toBe(200)
          expect(auth.payload?.error).toBe("invalid_token_response")
          expect(auth.payload?.error_description).toBeTypeOf("string")
          expect(auth.message).toMatch(/malformed token response/)
          yield* expectTokenRequests(2)

          const kept = Option.getOrThrow(yield* cache.get)
          expect(value(kept.accessToken)).toBe("tok-1")
          expect(kept.refreshToken && value(kept.refreshToken)).toBe("refresh-1")

          yield* setHandler(() => tokenResponse("tok-2"))
          expect(value(yield* Effect.flatMap(TokenProvider, (p) => p.getAccessToken))).toBe("tok-2")
          const all = yield* requests
          expect(all).toHaveLength(3)
          expect(all[2]!.form.get("refresh_token")).toBe("refresh-1")
          const stored = Option.getOrThrow(yield* cache.get)
          expect(value(stored.accessToken)).toBe("tok-2")
          expect(stored.refreshToken && value(stored.refreshToken)).toBe("refresh-1")
        }).pipe(
          Effect.provide(
            authorizationCodeLayer(() => tokenResponse("tok-1", { refresh_token: "refresh-1" }), { tokenCache: cache })
          )
        )
      })
  )

  it.effect("a malformed code exchange caches nothing", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* Effect.gen(function* () {
        const provider = yield* AuthorizationCode
        const error = yield* Effect.flip(provider.exchangeCode("code"))
        expect(error._tag).toBe("AuthenticationError")
        expect(Option.isNone(yield* cache.get)).toBe(true)
        expect((yield* Effect.flip(provider.getAccessToken))._tag).toBe("AuthenticationError")
        yield* expectTokenRequests(1)
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(() => MockHttpClient.json({ access_token: "x", expires_in: -5, refresh_token: "r" }), {
            tokenCache: cache
          })
        )
      )
    })
  )
})
