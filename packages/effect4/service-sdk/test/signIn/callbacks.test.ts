/** Callback URLs (DESIGN section 4): state first, repeated parameters, iss (RFC 9207), single use of a pending sign-in. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { OAuthClient } from "@service-sdk/effect"
import { AUTH_URL, credentials, issuing, mock, requests } from "../support/mock.js"

const begin = Effect.gen(function* () {
  const oauth = yield* OAuthClient.make({ ...credentials, redirectUri: "http://127.0.0.1:9/cb", maxRetries: 0 })
  return { oauth, pending: yield* oauth.beginAuthorization() }
})

describe("beginAuthorization", () => {
  it.effect("a fresh state of 256 bits each time (43 base64url characters, as the Effect 3 line's)", () =>
    Effect.gen(function* () {
      const states = new Set<string>()
      for (let i = 0; i < 20; i++) {
        const { pending } = yield* begin
        assert.match(pending.state, /^[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(Buffer.from(pending.state, "base64url").length, 32)
        states.add(pending.state)
      }
      assert.strictEqual(states.size, 20)
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "r" }))))
  )
})

describe("completeAuthorization", () => {
  it.effect("a repeated state, code, error or iss parameter is refused before any token request", () =>
    Effect.gen(function* () {
      const { oauth, pending } = yield* begin
      const s = encodeURIComponent(pending.state)
      for (const query of [
        `?code=c&state=${s}&state=${s}`,
        `?code=c&code=d&state=${s}`,
        `?error=a&error=b&state=${s}`,
        `?code=c&state=${s}&iss=${encodeURIComponent(AUTH_URL)}&iss=x`
      ]) {
        const error = yield* Effect.flip(oauth.completeAuthorization(query, pending))
        assert.strictEqual(error._tag, "AuthenticationError")
        assert.match(error.message, /repeats/)
      }
      assert.strictEqual((yield* requests).length, 0)
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "r" }))))
  )

  it.effect("iss of another issuer is refused (RFC 9207); the configured issuer passes", () =>
    Effect.gen(function* () {
      const { oauth, pending } = yield* begin
      const s = encodeURIComponent(pending.state)
      const error = yield* Effect.flip(
        oauth.completeAuthorization(`?code=c&state=${s}&iss=https://evil.example`, pending)
      )
      assert.match(error.message, /another issuer/)
      const token = yield* oauth.completeAuthorization(
        `?code=c&state=${s}&iss=${encodeURIComponent(AUTH_URL)}`,
        pending
      )
      assert.strictEqual(Redacted.value(token.accessToken), "token-1")
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "r" }))))
  )

  it.effect("the state is checked before anything else: a forged callback with an error is a state mismatch", () =>
    Effect.gen(function* () {
      const { oauth, pending } = yield* begin
      const error = yield* Effect.flip(oauth.completeAuthorization("?error=access_denied&state=forged", pending))
      assert.match(error.message, /state mismatch/)
      // and the pending sign-in was not used up by it
      const fiber = yield* Effect.forkChild(
        oauth.completeAuthorization(`?code=c&state=${encodeURIComponent(pending.state)}`, pending)
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "r" }))))
  )
})
