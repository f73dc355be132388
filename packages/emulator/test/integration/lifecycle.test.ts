/**
 * Token lifecycle over the wire: expiry, revocation, single flight and refresh-token rotation.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import {
  AuthorizationCode,
  ClientCredentials,
  ServiceClient,
  TokenCache,
  TokenInfo,
  TokenProvider
} from "@service-sdk/effect"
import { AsyncAuthorizationCode } from "@service-sdk/effect/promise"
import { Emulator } from "../../src/internal/effectApi.js"
import { api, tokenRequest } from "../utils.js"
import {
  ALBUM_ID,
  cachedAccessToken,
  cachedRefreshToken,
  HttpLive,
  providerOptions,
  statsSince,
  userSession
} from "./harness.js"

const CONCURRENCY = 500

/** A cached entry that expired a minute ago. */
const expired = (refreshToken?: string) =>
  Effect.map(
    Clock.currentTimeMillis,
    (now) =>
      new TokenInfo({
        accessToken: Redacted.make("expired-access-token"),
        expiresAt: now / 1000 - 60,
        refreshToken: refreshToken === undefined ? undefined : Redacted.make(refreshToken)
      })
  )

const distinct = (values: ReadonlyArray<string>) => new Set(values).size

describe("expiry", () => {
  it.scopedLive("a 2 s token with a 1 s skew is renewed transparently by a refresh", () =>
    Effect.gen(function* () {
      const { cache, client, emulator, provider } = yield* userSession({
        emulator: { tokenLifetime: 2 },
        provider: { skew: "1 second" }
      })
      const first = Redacted.value(yield* provider.getAccessToken)
      const refreshToken = yield* cachedRefreshToken(cache)
      const since = yield* statsSince(emulator)
      expect((yield* client.users.me).id).toBe("emulator-user")
      expect((yield* since).token).toBe(0)

      yield* Effect.sleep("1100 millis") // past expiresAt - skew
      expect((yield* client.users.me).id).toBe("emulator-user")
      const seen = yield* since
      expect(seen).toMatchObject({ token: 1, refresh_token: 1, api: 2 })
      expect(seen.apiByStatus).toEqual({ "200": 2 }) // renewed before use: the API never saw the stale token
      const second = Redacted.value(yield* provider.getAccessToken)
      expect(second).not.toBe(first)
      expect(yield* cachedAccessToken(cache)).toBe(second)
      expect(yield* cachedRefreshToken(cache)).toBe(refreshToken) // the emulator does not rotate by default
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("client credentials: an expiring app token is replaced by a new client_credentials request", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 2 })
      const since = yield* statsSince(emulator)
      const provider = yield* ClientCredentials.make({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        skew: "1 second"
      })
      const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
        Effect.provideService(TokenProvider, provider)
      )
      yield* client.albums.get(ALBUM_ID)
      const first = Redacted.value(yield* provider.getAccessToken)
      yield* Effect.sleep("1100 millis")
      yield* client.albums.get(ALBUM_ID)
      expect(Redacted.value(yield* provider.getAccessToken)).not.toBe(first)
      expect(yield* since).toMatchObject({ token: 2, client_credentials: 2, api: 2, apiByStatus: { "200": 2 } })
    }).pipe(Effect.provide(HttpLive))
  )
})

describe("revocation", () => {
  it.scopedLive("a revoked access token: one 401, one forced refresh, and the call succeeds", () =>
    Effect.gen(function* () {
      const { cache, client, emulator, provider } = yield* userSession()
      const revoked = Redacted.value(yield* provider.getAccessToken)
      const refreshToken = yield* cachedRefreshToken(cache)
      expect(yield* emulator.revoke(revoked)).toBe(true)
      const since = yield* statsSince(emulator)

      expect((yield* client.users.me).id).toBe("emulator-user")
      const seen = yield* since
      expect(seen).toMatchObject({ token: 1, refresh_token: 1, api: 2, apiByStatus: { "401": 1, "200": 1 } })
      expect(yield* cachedAccessToken(cache)).not.toBe(revoked)
      expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
      // and the new token stays in use
      yield* client.users.me
      expect((yield* since).token).toBe(1)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("50 concurrent calls on a revoked token share one forced refresh", () =>
    Effect.gen(function* () {
      const { client, emulator, provider } = yield* userSession()
      yield* emulator.revoke(Redacted.value(yield* provider.getAccessToken))
      const since = yield* statsSince(emulator)
      const users = yield* Effect.all(
        Array.from({ length: 50 }, () => client.users.me),
        { concurrency: "unbounded" }
      )
      expect(users.every((user) => user.id === "emulator-user")).toBe(true)
      const seen = yield* since
      expect(seen.token).toBe(1)
      expect(seen.apiByStatus["200"]).toBe(50)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a revoked refresh token too: the forced refresh fails with AuthenticationError invalid_grant", () =>
    Effect.gen(function* () {
      const { cache, client, emulator, provider } = yield* userSession()
      yield* emulator.revoke(Redacted.value(yield* provider.getAccessToken))
      expect(yield* emulator.revoke((yield* cachedRefreshToken(cache))!)).toBe(true)
      const since = yield* statsSince(emulator)
      const error = yield* Effect.flip(client.users.me)
      expect(error._tag).toBe("AuthenticationError")
      expect(error).toMatchObject({ status: 400, payload: { error: "invalid_grant" } })
      expect(yield* since).toMatchObject({ token: 1, refresh_token: 1, api: 1, apiByStatus: { "401": 1 } })
    }).pipe(Effect.provide(HttpLive))
  )
})

describe("single flight over the wire", () => {
  it.scopedLive(`client credentials: ${CONCURRENCY} concurrent getAccessToken on an expired token, one request`, () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const cache = yield* TokenCache.memory(yield* expired())
      const provider = yield* ClientCredentials.make({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        tokenCache: cache
      })
      const since = yield* statsSince(emulator)
      const tokens = yield* Effect.all(
        Array.from({ length: CONCURRENCY }, () => provider.getAccessToken),
        { concurrency: "unbounded" }
      )
      expect((yield* since).token).toBe(1)
      expect((yield* since).client_credentials).toBe(1)
      const values = tokens.map(Redacted.value)
      expect(distinct(values)).toBe(1)
      expect(values[0]).not.toBe("expired-access-token")
      expect(yield* cachedAccessToken(cache)).toBe(values[0])
      const reply = yield* Effect.orDie(api(emulator, `/albums/${ALBUM_ID}`, values[0]))
      expect(reply.status).toBe(200)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive(`refresh: ${CONCURRENCY} concurrent getAccessToken on an expired token, one refresh request`, () =>
    Effect.gen(function* () {
      // a real refresh token, from a first session
      const { cache: seeded, emulator } = yield* userSession()
      const refreshToken = (yield* cachedRefreshToken(seeded))!
      const cache = yield* TokenCache.memory(yield* expired(refreshToken))
      const provider = yield* AuthorizationCode.make({ ...providerOptions(emulator), tokenCache: cache })
      const since = yield* statsSince(emulator)
      const tokens = yield* Effect.all(
        Array.from({ length: CONCURRENCY }, () => provider.getAccessToken),
        { concurrency: "unbounded" }
      )
      expect(yield* since).toMatchObject({ token: 1, refresh_token: 1 })
      const values = tokens.map(Redacted.value)
      expect(distinct(values)).toBe(1)
      expect(values[0]).not.toBe("expired-access-token")
      expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
      const reply = yield* Effect.orDie(api(emulator, "/me", values[0]))
      expect(reply.status).toBe(200)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive(`Promise facade: ${CONCURRENCY} concurrent getAccessToken(), one refresh request`, () =>
    Effect.gen(function* () {
      const { cache: seeded, emulator } = yield* userSession()
      const refreshToken = (yield* cachedRefreshToken(seeded))!
      const since = yield* statsSince(emulator)
      const values = yield* Effect.acquireUseRelease(
        Effect.sync(() => new AsyncAuthorizationCode({ ...providerOptions(emulator), refreshToken })),
        (auth) => Effect.promise(() => Promise.all(Array.from({ length: CONCURRENCY }, () => auth.getAccessToken()))),
        (auth) => Effect.promise(() => auth.close())
      )
      expect(yield* since).toMatchObject({ token: 1, refresh_token: 1 })
      expect(distinct(values)).toBe(1)
    }).pipe(Effect.provide(HttpLive))
  )
})

describe("refresh token rotation", () => {
  it.scopedLive("20 forced refreshes in a row each use the newest refresh token", () =>
    Effect.gen(function* () {
      const { cache, client, emulator, provider } = yield* userSession({ emulator: { rotateRefreshTokens: true } })
      const refreshTokens = [(yield* cachedRefreshToken(cache))!]
      const accessTokens = [Redacted.value(yield* provider.getAccessToken)]
      const since = yield* statsSince(emulator)
      for (let i = 0; i < 20; i++) {
        const fresh = yield* provider.forceRefresh(Redacted.make(accessTokens.at(-1)!))
        accessTokens.push(Redacted.value(fresh))
        refreshTokens.push((yield* cachedRefreshToken(cache))!)
      }
      expect(yield* since).toMatchObject({ token: 20, refresh_token: 20 })
      expect(distinct(refreshTokens)).toBe(21) // every refresh rotated the refresh token
      expect(distinct(accessTokens)).toBe(21)

      // the server did rotate: a rotated-out refresh token is invalid_grant, the newest one works
      const replay = yield* Effect.orDie(
        tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: refreshTokens[19]! })
      )
      expect(replay.status).toBe(400)
      expect(replay.json.error).toBe("invalid_grant")
      expect((yield* client.users.me).id).toBe("emulator-user")
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive(
    "tokenLifetime 0: 20 sequential getAccessToken refresh 20 times, never with a stale refresh token",
    () =>
      Effect.gen(function* () {
        const { cache, emulator, provider } = yield* userSession({
          emulator: { rotateRefreshTokens: true, tokenLifetime: 0 }
        })
        const since = yield* statsSince(emulator)
        const refreshTokens = [(yield* cachedRefreshToken(cache))!]
        const accessTokens: Array<string> = []
        for (let i = 0; i < 20; i++) {
          accessTokens.push(Redacted.value(yield* provider.getAccessToken))
          refreshTokens.push((yield* cachedRefreshToken(cache))!)
        }
        expect(yield* since).toMatchObject({ token: 20, refresh_token: 20 })
        expect(distinct(accessTokens)).toBe(20)
        expect(distinct(refreshTokens)).toBe(21)
      }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("tokenLifetime 0: 20 concurrent getAccessToken share one refresh, without invalid_grant", () =>
    Effect.gen(function* () {
      const { cache, emulator, provider } = yield* userSession({
        emulator: { rotateRefreshTokens: true, tokenLifetime: 0 }
      })
      const before = yield* cachedRefreshToken(cache)
      const since = yield* statsSince(emulator)
      // the callers that join a renewal share its outcome (DESIGN §4), whatever the token's lifetime
      const tokens = yield* Effect.all(
        Array.from({ length: 20 }, () => provider.getAccessToken),
        { concurrency: "unbounded" }
      )
      expect(yield* since).toMatchObject({ token: 1, refresh_token: 1 })
      expect(distinct(tokens.map(Redacted.value))).toBe(1)
      expect(yield* cachedRefreshToken(cache)).not.toBe(before)
    }).pipe(Effect.provide(HttpLive))
  )
})
