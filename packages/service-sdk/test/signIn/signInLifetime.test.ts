/**
 * Refresh tokens that expire, and refusals that are final for a refresh token (DESIGN section 4): the entry records
 * the sign-in, the provider knows when it ends (the server's `refresh_token_expires_in`, else `refreshTokenLifetime`;
 * never extended by refreshing), warns in its last 7 days, and the refusal at its end (or any `invalid_grant`, or a
 * 400 without an error code) says "sign in again" at the first failure and is never sent again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, LogLevel, Option, Ref, Schema, TestClock } from "effect"
import {
  AuthenticationError,
  AuthorizationCode,
  ConfigurationError,
  TokenCache,
  TokenInfo,
  TokenStore,
  UserTokens
} from "@service-sdk/effect"
import { AsyncAuthorizationCode } from "@service-sdk/effect/promise"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, isolateEnv, oauthError, REDIRECT_URI, requestCount, tokenResponse } from "../fixtures.js"

isolateEnv()

const DAY = 86_400
const LIFETIME = Duration.days(180)

/** A provider on `handler`, its cache, and the warnings it logs. */
const setup = (handler: MockHandler, options: AuthorizationCode.Options = {}) =>
  Effect.gen(function* () {
    const cache = yield* TokenCache.memory()
    const warnings = yield* Ref.make<ReadonlyArray<string>>([])
    const logger = Logger.make(({ logLevel, message }) => {
      if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) {
        Effect.runSync(Ref.update(warnings, (all) => [...all, String(message)]))
      }
    })
    const layer = AuthorizationCode.layer({
      ...credentials,
      redirectUri: REDIRECT_URI,
      tokenCache: cache,
      ...options
    }).pipe(Layer.provideMerge(MockHttpClient.layer(handler)))
    return { cache, warnings, layer, logger }
  })

const exchanged = (handler: MockHandler, options: AuthorizationCode.Options = {}) =>
  Effect.gen(function* () {
    const { cache, warnings, layer, logger } = yield* setup(handler, options)
    const context = yield* Layer.build(layer)
    const provider = Effect.provide(AuthorizationCode, context)
    const token = yield* Effect.flatMap(provider, (p) => p.exchangeCode("the-code", { codeVerifier: "v".repeat(43) }))
    const get = Effect.flatMap(provider, (p) => p.getAccessToken).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    const endsAt = Effect.flatMap(provider, (p) => p.signInEndsAt)
    const count = Effect.provide(requestCount, context)
    return { cache, warnings, token, get, endsAt, count }
  })

/** Answers the code exchange, then `refresh` for each refresh request. */
const exchangeThen =
  (refresh: MockHandler, exchangeExtra: Readonly<Record<string, unknown>> = {}): MockHandler =>
  (request, call) =>
    request.form.get("grant_type") === "authorization_code"
      ? tokenResponse("tok-0", { refresh_token: "r-0", ...exchangeExtra })
      : refresh(request, call)

const refreshed: MockHandler = (_request, call) => tokenResponse(`tok-${call}`)

describe("the sign-in recorded in the entry", () => {
  it.scoped("the code exchange records signed_in_at; an old entry without it still decodes (backward compatible)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_750_000_000_000)
      const { token, endsAt } = yield* exchanged(exchangeThen(refreshed))
      expect(token.signedInAt).toBe(1_750_000_000)
      expect(token.signInEndsAt).toBeUndefined()
      expect(yield* endsAt).toStrictEqual(Option.none())
      const json = Schema.encodeSync(TokenInfo)(token)
      expect(json).toMatchObject({ signed_in_at: 1_750_000_000 })
      expect("sign_in_ends_at" in json && json.sign_in_ends_at !== undefined).toBe(false)
      const old = Schema.decodeUnknownSync(TokenInfo)({ access_token: "a", expires_at: 1, refresh_token: "r" })
      expect(old.signedInAt).toBeUndefined()
      expect(old.signInEndsAt).toBeUndefined()
    })
  )

  it.scoped("refresh_token_expires_in from the server sets the end; refreshing does not extend it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_750_000_000_000)
      const { get, endsAt, cache } = yield* exchanged(exchangeThen(refreshed, { refresh_token_expires_in: 30 * DAY }))
      const end = new Date((1_750_000_000 + 30 * DAY) * 1000)
      expect(yield* endsAt).toStrictEqual(Option.some(end))
      yield* TestClock.adjust(Duration.days(2))
      yield* get
      const entry = Option.getOrThrow(yield* cache.get)
      expect(entry.signedInAt).toBe(1_750_000_000)
      expect(yield* endsAt).toStrictEqual(Option.some(end))
    })
  )

  it.scoped("refreshTokenLifetime gives the end when the server does not; a refresh keeps it (not extended)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_750_000_000_000)
      const { get, endsAt } = yield* exchanged(exchangeThen(refreshed), { refreshTokenLifetime: LIFETIME })
      const end = Option.some(new Date((1_750_000_000 + 180 * DAY) * 1000))
      expect(yield* endsAt).toStrictEqual(end)
      for (let day = 0; day < 3; day++) {
        yield* TestClock.adjust(Duration.days(30))
        yield* get
        expect(yield* endsAt).toStrictEqual(end)
      }
    })
  )

  it.scoped("a bad refreshTokenLifetime is a ConfigurationError naming it", () =>
    Effect.gen(function* () {
      for (const bad of [-1, 0, Number.NaN, Duration.infinity]) {
        const error = yield* Effect.flip(
          AuthorizationCode.make({ ...credentials, refreshTokenLifetime: bad }).pipe(
            Effect.provide(MockHttpClient.layer(refreshed))
          )
        )
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.message).toContain("refreshTokenLifetime")
      }
    })
  )
})

describe("the stored JSON (file, directory, Redis)", () => {
  it("signed_in_at and sign_in_ends_at round-trip; an ill-typed one reads as absent, never losing the entry", () => {
    const token = new TokenInfo({
      ...Schema.decodeUnknownSync(TokenInfo)({ access_token: "a", expires_at: 10, refresh_token: "r" }),
      signedInAt: 1,
      signInEndsAt: 2
    })
    const json = JSON.parse(TokenCache.encodeJson(token))
    expect(json).toMatchObject({ signed_in_at: 1, sign_in_ends_at: 2 })
    const back = Option.getOrThrow(TokenCache.decodeJson(TokenCache.encodeJson(token)))
    expect([back.signedInAt, back.signInEndsAt]).toEqual([1, 2])
    const odd = TokenCache.decodeJson(JSON.stringify({ ...json, signed_in_at: "yesterday", sign_in_ends_at: null }))
    expect(Option.isSome(odd)).toBe(true)
    expect(Option.getOrThrow(odd).signedInAt).toBeUndefined()
    expect(Option.getOrThrow(odd).signInEndsAt).toBeUndefined()
  })
})

describe("the end of a sign-in", () => {
  it.scoped("a warning is logged by renewals within the last 7 days, not before", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_750_000_000_000)
      const { get, warnings } = yield* exchanged(exchangeThen(refreshed), { refreshTokenLifetime: LIFETIME })
      yield* TestClock.adjust(Duration.days(170))
      yield* get
      expect(yield* Ref.get(warnings)).toEqual([])
      yield* TestClock.adjust(Duration.days(5))
      yield* get
      const logged = yield* Ref.get(warnings)
      expect(logged).toHaveLength(1)
      expect(logged[0]).toContain("the sign-in ends on")
      expect(logged[0]).toContain("in 5 days")
      expect(logged[0]).toContain("sign in again")
    })
  )

  it.scoped("the first invalid_grant at the end says the sign-in ended and to sign in again; never sent again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_750_000_000_000)
      const { get, count } = yield* exchanged(
        exchangeThen(() => oauthError(400, "invalid_grant", "Invalid refresh token")),
        { refreshTokenLifetime: LIFETIME }
      )
      yield* TestClock.adjust(Duration.days(181))
      const first = yield* Effect.flip(get)
      expect(first).toBeInstanceOf(AuthenticationError)
      expect(first.message).toContain("the sign-in ended on")
      expect(first.message).toMatch(/sign in again$/)
      expect((first as AuthenticationError).payload?.error).toBe("invalid_grant")
      expect(yield* count).toBe(2)
      const second = yield* Effect.flip(get)
      expect(second.message).toContain("sign in again")
      expect(yield* count).toBe(2)
    })
  )

  it.scoped("an invalid_grant before the end says sign in again at the first failure too", () =>
    Effect.gen(function* () {
      const { get } = yield* exchanged(exchangeThen(() => oauthError(400, "invalid_grant", "Invalid refresh token")))
      yield* TestClock.adjust(Duration.hours(2))
      const first = yield* Effect.flip(get)
      expect(first.message).toBe("the refresh token was rejected (invalid_grant: Invalid refresh token): sign in again")
    })
  )
})

describe("a 400 without an error code to a refresh is final for that refresh token", () => {
  for (const [what, body] of [
    ["an empty body", ""],
    ["an empty object", "{}"],
    ["a message but no error", `{"message":"bad refresh token"}`]
  ] as const) {
    it.scoped(`${what}: "sign in again" at once, and the dead token is never sent again`, () =>
      Effect.gen(function* () {
        const { get, count } = yield* exchanged(exchangeThen(() => ({ status: 400, body })))
        yield* TestClock.adjust(Duration.hours(2))
        for (let call = 0; call < 3; call++) {
          const error = yield* Effect.flip(get)
          expect(error).toBeInstanceOf(AuthenticationError)
          expect(error.message).toContain("sign in again")
        }
        // the exchange, then one refresh request: not three
        expect(yield* count).toBe(2)
      })
    )
  }

  it.scoped("a 400 that names an error code other than invalid_grant is not final", () =>
    Effect.gen(function* () {
      const { get, count } = yield* exchanged(exchangeThen(() => oauthError(400, "invalid_request", "try again")))
      yield* TestClock.adjust(Duration.hours(2))
      yield* Effect.flip(get)
      yield* Effect.flip(get)
      expect(yield* count).toBe(3)
    })
  )
})

describe("UserTokens", () => {
  it.scoped("signInEndsAt(userId): the user's end from the entry, none for a user with no entry", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_750_000_000_000)
      const store = yield* TokenStore.memory()
      const users = yield* UserTokens.make({ ...credentials, store, refreshTokenLifetime: "180 days" }).pipe(
        Effect.provide(MockHttpClient.layer(refreshed))
      )
      const token = new TokenInfo({
        ...Schema.decodeUnknownSync(TokenInfo)({ access_token: "a", expires_at: 1_750_003_600, refresh_token: "r" }),
        signedInAt: 1_750_000_000
      })
      yield* users.signIn("alice", token)
      expect(yield* users.signInEndsAt("alice")).toStrictEqual(
        Option.some(new Date((1_750_000_000 + 180 * DAY) * 1000))
      )
      expect(yield* users.signInEndsAt("bob")).toStrictEqual(Option.none())
    })
  )
})

describe("the Promise facade", () => {
  it("AsyncAuthorizationCode.signInEndsAt(): the end from the server's refresh_token_expires_in", async () => {
    const before = Date.now()
    await using provider = new AsyncAuthorizationCode({
      ...credentials,
      redirectUri: REDIRECT_URI,
      httpClient: MockHttpClient.layer(() =>
        tokenResponse("tok-1", { refresh_token: "r", refresh_token_expires_in: 10 * DAY })
      )
    })
    expect(await provider.signInEndsAt()).toBeUndefined()
    await provider.exchangeCode("the-code", { codeVerifier: "v".repeat(43) })
    const end = (await provider.signInEndsAt())!.getTime()
    expect(end).toBeGreaterThanOrEqual(before + 10 * DAY * 1000)
    expect(end).toBeLessThanOrEqual(Date.now() + 10 * DAY * 1000)
  })
})
