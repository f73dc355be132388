/**
 * Refresh tokens that expire and final refusals (DESIGN section 4), over real loopback HTTP: the emulator's
 * `refreshTokenLifetime` (180 days for the Service, counted from sign-in, not extended by refreshing) and an empty 400
 * to a refresh, as an independently written authorization server answers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { AuthorizationCode, TokenCache } from "@service-sdk/effect"
import { Emulator } from "../../src/internal/effectApi.js"
import { request, tokenRequest } from "../utils.js"
import { HttpLive, providerOptions, statsSince } from "./harness.js"

const DAY = 86_400
const SERVICE_LIFETIME = 180 * DAY

describe("the emulator's refreshTokenLifetime", () => {
  it.scoped(
    "token responses carry refresh_token_expires_in from sign-in; a refresh after the end is invalid_grant",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make({ refreshTokenLifetime: 1000 })
        const signedIn = yield* emulator.signIn({ userId: "alice" })
        expect(signedIn.refresh_token_expires_in).toBe(1000)
        const refresh = { grant_type: "refresh_token", refresh_token: signedIn.refresh_token }
        yield* TestClock.adjust("400 seconds")
        const first = yield* tokenRequest(emulator, refresh)
        expect(first.status).toBe(200)
        // not extended by refreshing
        expect(first.json.refresh_token_expires_in).toBe(600)
        yield* TestClock.adjust("600 seconds")
        const ended = yield* tokenRequest(emulator, refresh)
        expect(ended.status).toBe(400)
        expect(ended.json).toEqual({ error: "invalid_grant", error_description: "Refresh token expired" })
      })
  )

  it.scoped("the control API and configure() set it; null turns it off; a bad value is refused", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      expect((yield* emulator.signIn({ userId: "bob" })).refresh_token_expires_in).toBeUndefined()
      const set = yield* request(`${emulator.authUrl}/__emulator/config`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refreshTokenLifetime: SERVICE_LIFETIME })
      })
      expect(set.status).toBe(200)
      expect((yield* emulator.signIn({ userId: "bob" })).refresh_token_expires_in).toBe(SERVICE_LIFETIME)
      yield* emulator.configure({ refreshTokenLifetime: null })
      expect((yield* emulator.signIn({ userId: "bob" })).refresh_token_expires_in).toBeUndefined()
      const bad = yield* request(`${emulator.authUrl}/__emulator/config`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refreshTokenLifetime: 0 })
      })
      expect(bad.status).toBe(400)
      expect((yield* Effect.either(Emulator.make({ refreshTokenLifetime: -5 })))._tag).toBe("Left")
    })
  )
})

describe("the SDK against the Service's 2026 rules", () => {
  it.scoped(
    "the provider knows the sign-in's end from the server; the first refusal at the end says sign in again",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make({ refreshTokenLifetime: SERVICE_LIFETIME })
        const tokens = yield* emulator.signIn({ userId: "carol" })
        const cache = yield* TokenCache.memory()
        const provider = yield* AuthorizationCode.make({
          ...providerOptions(emulator),
          tokenCache: cache,
          refreshToken: tokens.refresh_token
        })
        yield* provider.getAccessToken
        const end = Option.getOrThrow(yield* provider.signInEndsAt)
        expect(end.getTime()).toBe(SERVICE_LIFETIME * 1000)
        yield* TestClock.adjust(Duration.days(100))
        yield* provider.getAccessToken
        // refreshing did not extend it
        expect(Option.getOrThrow(yield* provider.signInEndsAt).getTime()).toBe(end.getTime())
        const since = yield* statsSince(emulator)
        yield* TestClock.adjust(Duration.days(81))
        const error = yield* Effect.flip(provider.getAccessToken)
        expect(error._tag).toBe("AuthenticationError")
        expect(error.message).toContain("the sign-in ended on 1970-06-30")
        expect(error.message).toMatch(/sign in again$/)
        yield* Effect.flip(provider.getAccessToken)
        expect((yield* since).refresh_token).toBe(1)
      }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("an empty 400 to a refresh (a fault) is final: one request, sign in again at once, three times", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 1 })
      const tokens = yield* emulator.signIn({ userId: "dave", expiresIn: 0 })
      const provider = yield* AuthorizationCode.make({
        ...providerOptions(emulator),
        refreshToken: tokens.refresh_token
      })
      const since = yield* statsSince(emulator)
      yield* emulator.injectFault({ target: "token", status: 400, body: "", count: 3 })
      for (let call = 0; call < 3; call++) {
        const error = yield* Effect.flip(provider.getAccessToken)
        expect(error._tag).toBe("AuthenticationError")
        expect(error.message).toContain("sign in again")
      }
      expect((yield* since).refresh_token).toBe(1)
    }).pipe(Effect.provide(HttpLive))
  )
})
