/**
 * `iss` (RFC 9207 §2.4; DESIGN section 9, "Callback and redirect"; issue 42 item 5): compared with the `issuer` option
 * by simple string comparison (default: the `authUrl` without a trailing slash), the same on both lines; with
 * `requireIss: true` a callback without `iss` is refused. A refused callback makes no token request.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AuthenticationError, AuthorizationCode, ConfigurationError, OAuthClient } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"

const credentials = { clientId: "client-id", clientSecret: "client-secret" }
const redirectUri = "http://127.0.0.1:8888/callback"

const server = () => {
  let requests = 0
  const handler: MockHandler = () => {
    requests++
    return MockHttpClient.json({ access_token: "at", token_type: "Bearer", expires_in: 3600, refresh_token: "rt" })
  }
  return { count: () => requests, layer: MockHttpClient.layer(handler) }
}

/** Completes a fresh sign-in with a callback that carries `iss` (none when undefined): "ok" or the error. */
const complete = (options: OAuthClient.Options, iss: string | undefined) => {
  const mock = server()
  return Effect.gen(function* () {
    const oauth = yield* OAuthClient.make({ ...credentials, redirectUri, ...options })
    const pending = yield* oauth.beginAuthorization()
    const query = `?code=c&state=${encodeURIComponent(pending.state)}${iss === undefined ? "" : `&iss=${encodeURIComponent(iss)}`}`
    const outcome = yield* Effect.match(oauth.completeAuthorization(query, pending), {
      onFailure: (error) => error,
      onSuccess: () => "ok" as const
    })
    if (outcome !== "ok") expect(mock.count(), "no token request for a refused callback").toBe(0)
    return outcome
  }).pipe(Effect.provide(mock.layer))
}

const refusedFor = (outcome: unknown, words: RegExp) => {
  expect(outcome).toBeInstanceOf(AuthenticationError)
  expect((outcome as AuthenticationError).message).toMatch(words)
}

describe("iss: simple string comparison with the issuer (RFC 9207 §2.4)", () => {
  it.effect("default: the authUrl without its trailing slash; any other spelling is another issuer", () =>
    Effect.gen(function* () {
      for (const authUrl of ["https://as.example", "https://as.example/", "https://as.example//"]) {
        expect(yield* complete({ authUrl }, "https://as.example"), authUrl).toBe("ok")
        expect(yield* complete({ authUrl }, undefined), authUrl).toBe("ok")
        for (const other of ["https://as.example/", "https://AS.example", "https://evil.example", ""]) {
          refusedFor(yield* complete({ authUrl }, other), /another issuer/)
        }
      }
    })
  )

  it.effect("an issuer option is compared as written, trailing slash included", () =>
    Effect.gen(function* () {
      const options = { authUrl: "https://as.example", issuer: "https://issuer.example/tenant/" }
      expect(yield* complete(options, "https://issuer.example/tenant/")).toBe("ok")
      refusedFor(yield* complete(options, "https://issuer.example/tenant"), /another issuer/)
      refusedFor(yield* complete(options, "https://as.example"), /another issuer/)
    })
  )

  it.effect("requireIss: true refuses a callback without iss, and still checks one with it", () =>
    Effect.gen(function* () {
      const options = { authUrl: "https://as.example", requireIss: true }
      refusedFor(yield* complete(options, undefined), /no iss parameter.*requireIss/)
      expect(yield* complete(options, "https://as.example")).toBe("ok")
      refusedFor(yield* complete(options, "https://evil.example"), /another issuer/)
      // parseResponseUrl takes it too
      const error = yield* Effect.flip(
        AuthorizationCode.parseResponseUrl("?code=c&state=s", { expectedState: "s", requireIss: true })
      )
      expect(error.message).toMatch(/no iss parameter/)
      expect(
        yield* AuthorizationCode.parseResponseUrl("?code=c&state=s&iss=x", {
          expectedState: "s",
          issuer: "x",
          requireIss: true
        })
      ).toBe("c")
    })
  )

  it.effect(
    "AuthorizationCode takes requireIss too; a requireIss that is not a boolean is a ConfigurationError",
    () => {
      const mock = server()
      return Effect.gen(function* () {
        const provider = yield* AuthorizationCode.make({
          ...credentials,
          authUrl: "https://as.example",
          redirectUri,
          requireIss: true
        })
        const pending = yield* provider.beginAuthorization()
        const error = yield* Effect.flip(
          provider.completeAuthorization(`?code=c&state=${encodeURIComponent(pending.state)}`, pending)
        )
        expect(error).toBeInstanceOf(AuthenticationError)
        expect(mock.count()).toBe(0)
        const bad = yield* Effect.flip(OAuthClient.make({ ...credentials, requireIss: "yes" as never }))
        expect(bad).toBeInstanceOf(ConfigurationError)
        expect(bad.message).toContain("requireIss")
      }).pipe(Effect.provide(mock.layer), Effect.scoped)
    }
  )
})
