import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, FastCheck as fc, Redacted } from "effect"
import { AuthenticationError, AuthorizationCode } from "@service-sdk/effect"
import { type MockResponse, MockHttpClient } from "@service-sdk/effect/testing"
import { normalizeScope } from "../../src/internal/config.js"
import * as TokenEndpoint from "../../src/internal/tokenEndpoint.js"
import { AUTH_URL, numberedTokens } from "../fixtures.js"

/** Strings rich in separators, so that normalisation has work to do. */
const scopeText = fc.string({ unit: fc.constantFrom("a", "b", "-", " ", ",", "\t", "\n", "\u00a0", "\u2003", "é") })
const anyText = fc.string({ unit: "binary" })
const nonEmptyText = fc.string({ unit: "binary", minLength: 1 })
/** RFC 6750 §2.1: a bearer token is visible ASCII (b64token and the JWT alphabet are inside it). */
const visibleAscii = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
  minLength: 1
})
/** Visible ASCII with at least one character that is not (a control, a space, DEL, non-ASCII). */
const notAToken = fc
  .tuple(
    anyText,
    fc.string({ unit: "binary", minLength: 1 }).filter((text) => /[^\x21-\x7e]/.test(text)),
    anyText
  )
  .map(([before, bad, after]) => before + bad + after)
const scopeToken = fc.string({ unit: "binary", minLength: 1, maxLength: 12 }).filter((s) => !/[\s,]/.test(s))

describe("properties", () => {
  it.prop(
    "scope normalisation is idempotent and yields no empty scope, no double or edge space, no comma",
    [fc.oneof(scopeText, fc.array(scopeText), anyText, fc.array(anyText))],
    ([scope]) => {
      const normalized = normalizeScope(scope)
      const words = (typeof scope === "string" ? [scope] : scope)
        .flatMap((part) => part.split(/[\s,]+/))
        .filter(Boolean)
      if (normalized === undefined) {
        expect(words).toEqual([])
        return
      }
      expect(normalized).not.toBe("")
      expect(normalized).not.toContain("  ")
      expect(normalized).toBe(normalized.trim())
      expect(normalized.split(" ")).toEqual(words)
      expect(normalized.split(" ").every((word) => word !== "" && !/[\s,]/.test(word))).toBe(true)
      expect(normalizeScope(normalized)).toBe(normalized)
      expect(normalizeScope(normalized.split(" "))).toBe(normalized)
    }
  )

  it.effect.prop(
    "getAuthorizationUrl round-trips client_id, redirect_uri, scope and state through URL parsing",
    {
      clientId: nonEmptyText.filter((s) => s.trim() === s && s !== ""),
      port: fc.integer({ min: 1, max: 65535 }),
      path: fc.webPath(),
      query: fc.webQueryParameters(),
      scope: fc.array(scopeToken, { maxLength: 5 }),
      state: nonEmptyText,
      showDialog: fc.boolean()
    },
    ({ clientId, path, port, query, scope, showDialog, state }) =>
      Effect.gen(function* () {
        // written in its canonical form (DESIGN section 9): what URL prints
        const redirectUri = new URL(`http://127.0.0.1:${port}${path}${query === "" ? "" : `?${query}`}`).href
        const provider = yield* AuthorizationCode.make({
          clientId,
          clientSecret: "s",
          authUrl: AUTH_URL,
          redirectUri
        }).pipe(Effect.scoped)
        const url = new URL(provider.getAuthorizationUrl({ state, scope, showDialog }))
        expect(`${url.origin}${url.pathname}`).toBe(`${AUTH_URL}/authorize`)
        expect(url.searchParams.get("response_type")).toBe("code")
        expect(url.searchParams.get("client_id")).toBe(clientId)
        expect(url.searchParams.get("redirect_uri")).toBe(redirectUri)
        expect(url.searchParams.get("scope")).toBe(scope.length === 0 ? null : scope.join(" "))
        expect(url.searchParams.get("state")).toBe(state)
        expect(url.searchParams.get("show_dialog")).toBe(showDialog ? "true" : null)
        expect(url.hash).toBe("")
      }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )

  it.effect.prop(
    "parseResponseUrl returns exactly the code for any code and state",
    { code: nonEmptyText, state: anyText, form: fc.constantFrom("url", "?query", "query"), iss: fc.option(anyText) },
    ({ code, form, iss, state }) =>
      Effect.gen(function* () {
        const params = new URLSearchParams({ code, state })
        if (iss !== null) params.set("iss", iss)
        const query = params.toString()
        const input =
          form === "url" ? `http://127.0.0.1:8888/callback?${query}` : form === "?query" ? `?${query}` : query
        expect(yield* AuthorizationCode.parseResponseUrl(input, { expectedState: state })).toBe(code)
        expect(yield* AuthorizationCode.parseResponseUrl(input)).toBe(code)
        const other = yield* Effect.either(AuthorizationCode.parseResponseUrl(input, { expectedState: `${state}x` }))
        expect(Either.isLeft(other)).toBe(true)
      })
  )

  describe("token response decoding", () => {
    const exchange = (answer: MockResponse) =>
      Effect.gen(function* () {
        const endpoint = TokenEndpoint.make(
          {
            authUrl: AUTH_URL,
            clientId: "id",
            clientSecret: Redacted.make("secret"),
            timeout: Duration.seconds(30),
            maxRetries: 3
          },
          yield* HttpClient.HttpClient
        )
        const result = yield* Effect.either(endpoint({ grant_type: "client_credentials" }))
        const requests = yield* (yield* MockHttpClient).requests
        return { result, requests: requests.length }
      }).pipe(Effect.provide(MockHttpClient.layer(() => answer)))

    it.effect.prop(
      "accepts any valid response",
      {
        access_token: visibleAscii,
        expires_in: fc.oneof(fc.nat(), fc.double({ min: 0, max: 1e12, noNaN: true })),
        token_type: fc.constantFrom("Bearer", "bearer", "BEARER", null, undefined),
        refresh_token: fc.option(fc.oneof(visibleAscii, fc.constant("")), { nil: undefined }),
        scope: fc.option(anyText, { nil: undefined })
      },
      (body) =>
        Effect.gen(function* () {
          const { requests, result } = yield* exchange(MockHttpClient.json(body))
          expect(requests).toBe(1)
          expect(Either.isRight(result)).toBe(true)
          if (Either.isLeft(result)) return
          const token = result.right
          expect(Redacted.value(token.accessToken)).toBe(body.access_token)
          expect(token.expiresAt).toBe(body.expires_in)
          expect(token.refreshToken && Redacted.value(token.refreshToken)).toBe(body.refresh_token || undefined)
          expect(token.scope).toBe(body.scope)
        })
    )

    it.effect.prop(
      "rejects, without a retry or an echo, any access or refresh token that is not visible ASCII",
      { bad: notAToken, good: visibleAscii, which: fc.constantFrom("access_token", "refresh_token") },
      ({ bad, good, which }) =>
        Effect.gen(function* () {
          const body =
            which === "access_token"
              ? { access_token: bad, token_type: "Bearer", expires_in: 3600, refresh_token: good }
              : { access_token: good, token_type: "Bearer", expires_in: 3600, refresh_token: bad }
          const { requests, result } = yield* exchange(MockHttpClient.json(body))
          expect(requests).toBe(1)
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isRight(result)) return
          expect(result.left).toBeInstanceOf(AuthenticationError)
          expect(result.left.message).toContain(`${which} is not visible ASCII`)
          if (bad.length >= 8) expect(result.left.message).not.toContain(bad)
        })
    )

    it.effect.prop(
      "rejects any negative or non-finite expires_in",
      {
        access_token: nonEmptyText,
        expiresIn: fc.oneof(
          fc.double({ max: -Number.MIN_VALUE, noNaN: true, noDefaultInfinity: true }).map(String),
          fc.integer({ min: -1_000_000, max: -1 }).map(String),
          fc.integer({ min: 309, max: 100_000 }).chain((exponent) => fc.constantFrom(`1e${exponent}`, `-1e${exponent}`))
        )
      },
      ({ access_token, expiresIn }) =>
        Effect.gen(function* () {
          const text = `{"access_token":${JSON.stringify(access_token)},"token_type":"Bearer","expires_in":${expiresIn}}`
          expect(Number.isFinite(JSON.parse(text).expires_in) && JSON.parse(text).expires_in >= 0).toBe(false)
          const { requests, result } = yield* exchange({ status: 200, body: text })
          expect(requests).toBe(1)
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isRight(result)) return
          expect(result.left).toBeInstanceOf(AuthenticationError)
          expect((result.left as AuthenticationError).status).toBe(200)
          if (access_token.length >= 8) expect(result.left.message).not.toContain(access_token)
        })
    )
  })
})
