/**
 * A sign-in's first token records when it was issued (DESIGN section 3 TokenInfo, section 9 "Tokens"; issue 42 item
 * 1): every token from any grant has `issuedAt`, so that the short-lived rule of section 4 (renew half-way through a
 * lifetime of at most twice `skew`) holds for the token of `exchangeCode`/`completeAuthorization` and for one given
 * to `UserTokens.signIn`, instead of `expiresAt - skew` (already past for a 2 s token: renewed at the first call).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, TestClock } from "effect"
import { AuthorizationCode, OAuthClient, TokenInfo, TokenStore, UserTokens } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"

const credentials = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
const redirectUri = "http://127.0.0.1:8888/callback"
const verifier = "v".repeat(43)

/** A server of 2 s tokens (a third server's setting), counting its token requests by grant. */
const shortLived = () => {
  const grants: Array<string> = []
  const handler: MockHandler = (request) => {
    const grant = request.form.get("grant_type") ?? "?"
    grants.push(grant)
    return MockHttpClient.json({
      access_token: `at-${grants.length}`,
      token_type: "Bearer",
      expires_in: 2,
      refresh_token: `rt-${grants.length}`
    })
  }
  return { grants, layer: MockHttpClient.layer(handler) }
}

describe("a sign-in's first token is short-lived, not stale", () => {
  it.scoped("exchangeCode: the token records issued_at; the first call 17 ms later is served without a request", () => {
    const server = shortLived()
    return Effect.gen(function* () {
      const provider = yield* AuthorizationCode.make({ ...credentials, redirectUri })
      const token = yield* provider.exchangeCode("code", { codeVerifier: verifier })
      expect(token.issuedAt).toBe(0)
      yield* TestClock.adjust("17 millis")
      expect(Redacted.value(yield* provider.getAccessToken)).toBe("at-1")
      expect(server.grants).toEqual(["authorization_code"])
      // renewed half-way through its 2 s (never on every call, never at expiresAt - skew)
      yield* TestClock.adjust("1 second")
      expect(Redacted.value(yield* provider.getAccessToken)).toBe("at-2")
      expect(Redacted.value(yield* provider.getAccessToken)).toBe("at-2")
      expect(server.grants).toEqual(["authorization_code", "refresh_token"])
    }).pipe(Effect.provide(server.layer))
  })

  it.scoped("completeAuthorization: the same", () => {
    const server = shortLived()
    return Effect.gen(function* () {
      const provider = yield* AuthorizationCode.make({ ...credentials, redirectUri })
      const pending = yield* provider.beginAuthorization()
      const token = yield* provider.completeAuthorization(
        `${redirectUri}?code=c&state=${encodeURIComponent(pending.state)}`,
        pending
      )
      expect(token.issuedAt).toBe(0)
      yield* TestClock.adjust("17 millis")
      expect(Redacted.value(yield* provider.getAccessToken)).toBe("at-1")
      expect(server.grants).toEqual(["authorization_code"])
    }).pipe(Effect.provide(server.layer))
  })

  it.scoped("OAuthClient: every grant's token records issued_at (code, refresh, client credentials)", () => {
    const server = shortLived()
    return Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...credentials, redirectUri })
      yield* TestClock.adjust("5 seconds")
      expect((yield* oauth.exchangeCode("code", { codeVerifier: verifier })).issuedAt).toBe(5)
      expect((yield* oauth.refresh("rt-1")).issuedAt).toBe(5)
      expect((yield* oauth.clientCredentials()).issuedAt).toBe(5)
    }).pipe(Effect.provide(server.layer))
  })

  it.scoped(
    "UserTokens.signIn: a token from completeAuthorization, and one without issuedAt, are not renewed at once",
    () => {
      const server = shortLived()
      return Effect.gen(function* () {
        const store = yield* TokenStore.memory()
        const users = yield* UserTokens.make({ ...credentials, redirectUri, store })
        const oauth = yield* OAuthClient.make({ ...credentials, redirectUri })
        const pending = yield* oauth.beginAuthorization()
        yield* users.signIn(
          "alice",
          yield* oauth.completeAuthorization(`?code=c&state=${encodeURIComponent(pending.state)}`, pending)
        )
        // a token built by the program, with no issue time: issued at the sign-in, for all the SDK can tell
        yield* users.signIn(
          "bob",
          new TokenInfo({
            accessToken: Redacted.make("bob-token"),
            expiresAt: 2,
            refreshToken: Redacted.make("bob-refresh")
          })
        )
        yield* TestClock.adjust("17 millis")
        expect(Redacted.value(yield* users.provider("alice").getAccessToken)).toBe("at-1")
        expect(Redacted.value(yield* users.provider("bob").getAccessToken)).toBe("bob-token")
        expect(server.grants).toEqual(["authorization_code"])
        const entry = yield* store("bob").get
        expect(entry._tag === "Some" && entry.value.issuedAt).toBe(0)
      }).pipe(Effect.provide(server.layer))
    }
  )
})
