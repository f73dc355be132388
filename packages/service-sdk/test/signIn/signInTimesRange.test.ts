/**
 * A sign-in's times out of range (DESIGN section 9, "Tokens"; issue 42 item 2): a stored `sign_in_ends_at` or
 * `signed_in_at` (with `refreshTokenLifetime`), or a server's `refresh_token_expires_in`, that is negative, not finite
 * or past year 9999 is read as unknown, never thrown (no `RangeError: Invalid time value`, no Invalid Date), and the
 * refresh token a renewal rotated is stored whatever else fails.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { AuthorizationCode, TokenCache, TokenInfo, TokenStore, UserTokens } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"

const credentials = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
const redirectUri = "http://127.0.0.1:8888/callback"

/** A server that rotates refresh tokens; `extra` is added to each answer. */
const rotating = (extra: Readonly<Record<string, unknown>> = {}): MockHandler => {
  let n = 0
  return () => {
    n++
    return MockHttpClient.json({
      access_token: `at-${n}`,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: `rt-${n}`,
      ...extra
    })
  }
}

/** An expired entry with a sign-in time of its own. */
const stale = (fields: { readonly signedInAt?: number; readonly signInEndsAt?: number }) =>
  new TokenInfo({
    accessToken: Redacted.make("old-token"),
    expiresAt: 1,
    refreshToken: Redacted.make("rt-0"),
    ...fields
  })

const OUT_OF_RANGE: ReadonlyArray<{ readonly signedInAt?: number; readonly signInEndsAt?: number }> = [
  { signInEndsAt: -1e13 },
  { signInEndsAt: 1e13 },
  { signInEndsAt: -1 },
  { signedInAt: -1e13 },
  { signedInAt: 1e13 }
]

describe("sign-in times out of range are unknown, never thrown", () => {
  it.scoped("a renewal of an entry with one: served, the rotated refresh token stored, the end unknown", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust("100 seconds")
      for (const fields of OUT_OF_RANGE) {
        yield* Effect.gen(function* () {
          const cache = yield* TokenCache.memory(stale(fields))
          const provider = yield* AuthorizationCode.make({
            ...credentials,
            redirectUri,
            tokenCache: cache,
            refreshTokenLifetime: "180 days"
          })
          const exit = yield* Effect.exit(provider.getAccessToken)
          expect(exit._tag, JSON.stringify(fields)).toBe("Success")
          const entry = yield* cache.get
          expect(Option.isSome(entry) && Redacted.value(entry.value.refreshToken!), JSON.stringify(fields)).toBe("rt-1")
          expect(yield* provider.signInEndsAt, JSON.stringify(fields)).toStrictEqual(Option.none())
        }).pipe(Effect.provide(MockHttpClient.layer(rotating())))
      }
    })
  )

  it.scoped("an invalid_grant for such an entry is an AuthenticationError that says sign in again, not a defect", () =>
    Effect.gen(function* () {
      for (const fields of OUT_OF_RANGE) {
        const cache = yield* TokenCache.memory(stale(fields))
        const provider = yield* AuthorizationCode.make({
          ...credentials,
          redirectUri,
          tokenCache: cache,
          refreshTokenLifetime: "180 days"
        })
        const error = yield* Effect.flip(provider.getAccessToken)
        expect(error._tag, JSON.stringify(fields)).toBe("AuthenticationError")
        expect(error.message).toContain("sign in again")
        expect(error.message).not.toContain("Invalid")
      }
    }).pipe(
      Effect.provide(
        MockHttpClient.layer(() => MockHttpClient.json({ error: "invalid_grant", error_description: "expired" }, 400))
      )
    )
  )

  it.scoped("a stored entry with one reads the time as absent", () =>
    Effect.sync(() => {
      for (const [key, value] of [
        ["sign_in_ends_at", -1e13],
        ["sign_in_ends_at", 1e13],
        ["sign_in_ends_at", -5],
        ["signed_in_at", 1e300],
        ["signed_in_at", -1]
      ] as const) {
        const decoded = TokenCache.decodeJson(
          JSON.stringify({ access_token: "a", expires_at: 10, refresh_token: "r", [key]: value })
        )
        expect(Option.isSome(decoded), key).toBe(true)
        if (Option.isNone(decoded)) continue
        expect(decoded.value.signInEndsAt, `${key} ${value}`).toBeUndefined()
        expect(decoded.value.signedInAt, `${key} ${value}`).toBeUndefined()
      }
      // in range: kept
      const kept = TokenCache.decodeJson(
        JSON.stringify({ access_token: "a", expires_at: 10, signed_in_at: 5, sign_in_ends_at: 253402300799 })
      )
      expect(Option.isSome(kept) && [kept.value.signedInAt, kept.value.signInEndsAt]).toEqual([5, 253402300799])
    })
  )

  it.scoped("a server's refresh_token_expires_in of 1e13: signInEndsAt is none, never an Invalid Date", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const provider = yield* AuthorizationCode.make({ ...credentials, redirectUri })
      const token = yield* provider.exchangeCode("code", { codeVerifier: "v".repeat(43) })
      expect(token.signInEndsAt).toBeUndefined()
      expect(yield* provider.signInEndsAt).toStrictEqual(Option.none())
      const users = yield* UserTokens.make({ ...credentials, redirectUri, store })
      yield* users.signIn("alice", token)
      expect(yield* users.signInEndsAt("alice")).toStrictEqual(Option.none())
      // one the server names in range is kept
      const sane = yield* AuthorizationCode.make({ ...credentials, redirectUri }).pipe(
        Effect.provide(MockHttpClient.layer(rotating({ refresh_token_expires_in: 86_400 })))
      )
      yield* sane.exchangeCode("code", { codeVerifier: "v".repeat(43) })
      const end = yield* sane.signInEndsAt
      expect(Option.isSome(end) && end.value.getTime()).toBe(86_400_000)
    }).pipe(Effect.provide(MockHttpClient.layer(rotating({ refresh_token_expires_in: 1e13 }))))
  )
})
