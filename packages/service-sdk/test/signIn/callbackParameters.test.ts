/**
 * Callback URLs (DESIGN section 4): a repeated `state`, `code`, `error` or `iss` is an AuthenticationError (RFC 6749
 * §3.1); an `iss`, when present, must equal the configured issuer (RFC 9207). Either way no token request is made.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { AuthenticationError, AuthorizationCode, ConfigurationError, OAuthClient } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import {
  AUTH_URL,
  credentials,
  isolateEnv,
  numberedTokens,
  requestCount,
  requests,
  value,
  withOAuthClient
} from "../fixtures.js"

isolateEnv()

const withClient = withOAuthClient

const tokens = numberedTokens({ refresh_token: "r" })

describe("repeated callback parameters (RFC 6749 §3.1)", () => {
  it.effect("parseResponseUrl refuses a repeated state, code, error or iss, whichever copy is right", () =>
    Effect.gen(function* () {
      for (const query of [
        "?state=right&state=evil&code=c",
        "?state=evil&state=right&code=c",
        "?state=right&code=c&code=attacker",
        "?state=right&error=access_denied&error=server_error",
        `?state=right&code=c&iss=${encodeURIComponent(AUTH_URL)}&iss=https%3A%2F%2Fevil.example`
      ]) {
        const error = yield* Effect.flip(AuthorizationCode.parseResponseUrl(query, { expectedState: "right" }))
        expect(error, query).toBeInstanceOf(AuthenticationError)
        expect(error.message).toMatch(/repeats the (state|code|error|iss) parameter/)
        expect(error.message).not.toContain("attacker")
      }
      // the same without expectedState: a repeat is refused on its own
      const bare = yield* Effect.flip(AuthorizationCode.parseResponseUrl("?code=c&code=attacker"))
      expect(bare.message).toContain("repeats the code parameter")
      expect(yield* AuthorizationCode.parseResponseUrl("?code=c&state=s&other=1&other=2")).toBe("c")
    })
  )

  it.prop(
    "any repetition of state, code, error or iss fails; the first copy never passes for the answer",
    [fc.constantFrom("state", "code", "error", "iss"), fc.string({ minLength: 1 }), fc.string({ minLength: 1 })],
    ([name, first, second]) => {
      const query = new URLSearchParams({ state: "s", code: "c" })
      query.set(name, first)
      query.append(name, second)
      const outcome = Effect.runSync(
        Effect.either(AuthorizationCode.parseResponseUrl(`?${query}`, { expectedState: "s" }))
      )
      expect(outcome._tag).toBe("Left")
    }
  )

  it.effect("completeAuthorization: ?state=<right>&state=evil&code=… gives no token and makes no request", () =>
    withClient(tokens, (oauth) =>
      Effect.gen(function* () {
        const pending = yield* oauth.beginAuthorization()
        for (const callback of [
          `?state=${pending.state}&state=evil&code=c`,
          `?state=${pending.state}&code=c&code=attacker`
        ]) {
          const error = yield* Effect.flip(oauth.completeAuthorization(callback, pending))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect(error.message).toContain("repeats the")
        }
        expect(yield* requestCount).toBe(0)
        // a forgery does not use the pending sign-in up
        const token = yield* oauth.completeAuthorization(`?code=c&state=${pending.state}`, pending)
        expect(value(token.accessToken)).toBe("tok-1")
      })
    )
  )
})

describe("the issuer of the callback (RFC 9207)", () => {
  it.effect("an iss of another server is refused before any request; the configured one (authUrl) passes", () =>
    withClient(tokens, (oauth) =>
      Effect.gen(function* () {
        const pending = yield* oauth.beginAuthorization()
        const evil = yield* Effect.flip(
          oauth.completeAuthorization(
            `?${new URLSearchParams({ code: "c", state: pending.state, iss: "https://evil.example" })}`,
            pending
          )
        )
        expect(evil).toBeInstanceOf(AuthenticationError)
        expect(evil.message).toContain("RFC 9207")
        expect(evil.message).toContain("https://evil.example")
        expect(yield* requestCount).toBe(0)
        const token = yield* oauth.completeAuthorization(
          `?${new URLSearchParams({ code: "c", state: pending.state, iss: AUTH_URL })}`,
          pending
        )
        expect(value(token.accessToken)).toBe("tok-1")
        expect((yield* requests).length).toBe(1)
      })
    )
  )

  it.effect("an iss is compared exactly: a trailing slash or another case is another issuer", () =>
    withClient(tokens, (oauth) =>
      Effect.gen(function* () {
        for (const iss of [`${AUTH_URL}/`, AUTH_URL.toUpperCase(), `${AUTH_URL}.evil.example`]) {
          const pending = yield* oauth.beginAuthorization()
          const error = yield* Effect.flip(
            oauth.completeAuthorization(`?${new URLSearchParams({ code: "c", state: pending.state, iss })}`, pending)
          )
          expect(error, iss).toBeInstanceOf(AuthenticationError)
        }
        expect(yield* requestCount).toBe(0)
      })
    )
  )

  it.effect("the issuer option replaces the default; an error response with a foreign iss is refused as foreign", () =>
    withClient(
      tokens,
      (oauth) =>
        Effect.gen(function* () {
          const pending = yield* oauth.beginAuthorization()
          const foreign = yield* Effect.flip(
            oauth.completeAuthorization(
              `?${new URLSearchParams({ error: "access_denied", state: pending.state, iss: AUTH_URL })}`,
              pending
            )
          )
          expect(foreign.message).toContain("another issuer")
          const token = yield* oauth.completeAuthorization(
            `?${new URLSearchParams({ code: "c", state: pending.state, iss: "https://accounts.example/tenant" })}`,
            pending
          )
          expect(value(token.accessToken)).toBe("tok-1")
        }),
      { issuer: "https://accounts.example/tenant" }
    )
  )

  it.effect("parseResponseUrl checks iss when given an issuer; a bad issuer option is a ConfigurationError", () =>
    Effect.gen(function* () {
      const query = `?${new URLSearchParams({ code: "c", iss: "https://evil.example" })}`
      expect(yield* AuthorizationCode.parseResponseUrl(query)).toBe("c")
      const error = yield* Effect.flip(AuthorizationCode.parseResponseUrl(query, { issuer: AUTH_URL }))
      expect(error.message).toContain("another issuer")
      const bad = yield* Effect.flip(
        OAuthClient.make({ ...credentials, issuer: "not a url" }).pipe(
          Effect.provide(MockHttpClient.layer(() => ({ status: 500 })))
        )
      )
      expect(bad).toBeInstanceOf(ConfigurationError)
      expect(bad.message).toContain("issuer")
    })
  )
})
