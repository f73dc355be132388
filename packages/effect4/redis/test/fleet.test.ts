/**
 * A fleet sharing one Redis entry, each "process" with its own connection and provider: one token request per
 * expiry for the whole fleet, a 401 answered by one forced refresh, an `invalid_grant` marked fleet-wide (no process
 * sends that refresh token again) until a new sign-in reaches the entry, and the Redis cache as a layer.
 */
import { randomUUID } from "node:crypto"
import { expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import {
  AuthenticationError,
  AuthorizationCode,
  ClientCredentials,
  TokenInfo,
  TokenProvider
} from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { describeRedis } from "../../../redis/test/support/redisServer.js"

const credentials = { clientId: "fleet-client", clientSecret: "fleet-secret", authUrl: "http://127.0.0.1:9" }

/** A token endpoint that answers slowly (50 ms) with a new token each time, valid for `expiresIn` seconds. */
const slowTokenEndpoint = (expiresIn: number) =>
  MockHttpClient.layer((_request, call) =>
    Effect.as(
      Effect.sleep("50 millis"),
      MockHttpClient.json({ access_token: `fleet-token-${call}`, token_type: "Bearer", expires_in: expiresIn })
    )
  )

const PROCESSES = 8
const CALLERS = 50

describeRedis("a fleet sharing one RedisTokenCache (Effect 4)", (server) => {
  it.live(
    `${PROCESSES} providers × ${CALLERS} callers make one token request per expiry`,
    () =>
      Effect.gen(function* () {
        const key = `test4:fleet:${randomUUID()}`
        const providers = yield* Effect.forEach(Array.from({ length: PROCESSES }), () =>
          Effect.flatMap(RedisTokenCache.make({ url: server().url, key }), (tokenCache) =>
            ClientCredentials.make({ ...credentials, tokenCache, skew: "1 second" })
          )
        )
        const mock = yield* MockHttpClient
        const round = Effect.map(
          Effect.forEach(
            providers,
            (provider) =>
              Effect.forEach(Array.from({ length: CALLERS }), () => provider.getAccessToken, {
                concurrency: "unbounded"
              }),
            { concurrency: "unbounded" }
          ),
          (tokens) => new Set(tokens.flat().map(Redacted.value))
        )
        // one request per token lifetime: the token (4 s) is stale 1 s before it expires, so a round gets one more
        // request per 3 s it lasts (a round takes well under a second on a quiet machine: then exactly one)
        const perRound = (millis: number) => 1 + Math.floor(millis / 3000)
        const timedRound = Effect.map(Effect.timed(round), ([took, tokens]) => ({
          tokens,
          most: perRound(Duration.toMillis(took))
        }))
        const first = yield* timedRound
        const afterFirst = (yield* mock.requests).length
        expect(afterFirst).toBeGreaterThanOrEqual(1)
        expect(afterFirst).toBeLessThanOrEqual(first.most)
        expect(first.tokens.has("fleet-token-0")).toBe(true)
        expect((yield* mock.requests)[0]!.form.get("grant_type")).toBe("client_credentials")

        yield* Effect.sleep("3100 millis")
        const second = yield* timedRound
        const afterSecond = (yield* mock.requests).length
        expect(afterSecond - afterFirst).toBeGreaterThanOrEqual(1)
        expect(afterSecond - afterFirst).toBeLessThanOrEqual(second.most)
        expect(second.tokens.has("fleet-token-0")).toBe(false)

        // a 401 on a token: the first provider to force a refresh asks once; the others find its new token
        const rejected = Redacted.make([...second.tokens][0]!)
        const [took, refreshed] = yield* Effect.timed(
          Effect.forEach(providers, (provider) => provider.forceRefresh(rejected), { concurrency: "unbounded" })
        )
        const afterForce = (yield* mock.requests).length
        expect(afterForce - afterSecond).toBeGreaterThanOrEqual(1)
        expect(afterForce - afterSecond).toBeLessThanOrEqual(perRound(Duration.toMillis(took)))
        expect(refreshed.map(Redacted.value)).not.toContain(Redacted.value(rejected))
      }).pipe(Effect.provide(slowTokenEndpoint(4))),
    30_000
  )

  it.live("invalid_grant is marked fleet-wide: no process sends that refresh token again, until a new sign-in", () =>
    Effect.gen(function* () {
      const key = `test4:fleet:${randomUUID()}`
      const providers = yield* Effect.forEach([1, 2, 3], () =>
        Effect.flatMap(RedisTokenCache.make({ url: server().url, key }), (tokenCache) =>
          AuthorizationCode.make({ ...credentials, redirectUri: "http://127.0.0.1:8080/callback", tokenCache })
        )
      )
      const cache = yield* RedisTokenCache.make({ url: server().url, key })
      yield* cache.set(
        new TokenInfo({
          accessToken: Redacted.make("expired-at"),
          refreshToken: Redacted.make("rt-revoked"),
          expiresAt: 0
        })
      )
      const mock = yield* MockHttpClient
      const first = yield* Effect.flip(providers[0]!.getAccessToken)
      expect(first).toBeInstanceOf(AuthenticationError)
      expect((yield* mock.requests).length).toBe(1)
      const raw = JSON.parse((yield* Effect.promise(() => server().admin.get(key))) ?? "{}")
      expect(raw.refresh_token).toBe("rt-revoked")
      expect(raw.refresh_rejected).toBe(true)

      // the other processes: AuthenticationError at once, no request
      for (const provider of providers.slice(1)) {
        expect(yield* Effect.flip(provider.getAccessToken)).toBeInstanceOf(AuthenticationError)
      }
      expect((yield* mock.requests).length).toBe(1)
      for (const text of [first.message, JSON.stringify(first)]) expect(text).not.toContain("rt-revoked")

      // a new sign-in elsewhere reaches the entry: every process renews from it, once
      yield* cache.set(
        new TokenInfo({ accessToken: Redacted.make("old-at"), refreshToken: Redacted.make("rt-new"), expiresAt: 0 })
      )
      const tokens = yield* Effect.forEach(providers, (provider) => provider.getAccessToken, {
        concurrency: "unbounded"
      })
      expect(new Set(tokens.map(Redacted.value))).toEqual(new Set(["renewed-from-rt-new"]))
      expect((yield* mock.requests).map((r) => r.form.get("refresh_token"))).toEqual(["rt-revoked", "rt-new"])
    }).pipe(
      Effect.provide(
        MockHttpClient.layer((request) =>
          request.form.get("refresh_token") === "rt-revoked"
            ? MockHttpClient.json({ error: "invalid_grant", error_description: "Refresh token revoked" }, 400)
            : MockHttpClient.json({
                access_token: `renewed-from-${request.form.get("refresh_token")}`,
                token_type: "Bearer",
                expires_in: 3600
              })
        )
      )
    )
  )

  it.live("RedisTokenCache.layer provides the cache to a provider layer", () =>
    Effect.gen(function* () {
      const key = `test4:fleet:${randomUUID()}`
      const Provider = Layer.unwrap(
        Effect.gen(function* () {
          const tokenCache = yield* RedisTokenCache.RedisTokenCache
          return ClientCredentials.layer({ ...credentials, tokenCache })
        })
      ).pipe(Layer.provide(RedisTokenCache.layer({ url: server().url, key })))
      const token = yield* Effect.gen(function* () {
        const provider = yield* TokenProvider
        return yield* provider.getAccessToken
      }).pipe(Effect.provide(Provider), Effect.provide(slowTokenEndpoint(3600)))
      expect(Redacted.value(token)).toBe("fleet-token-0")
      const stored = JSON.parse((yield* Effect.promise(() => server().admin.get(key))) ?? "{}")
      expect(stored.access_token).toBe("fleet-token-0")
      expect(stored.client_id).toBe("fleet-client")
    })
  )
})
