/**
 * `refreshAhead` with the fleet lock: providers sharing a `RedisTokenCache` each start a background renewal within
 * the window, and those renewals share the fleet lock like any other: one token request for the whole fleet, and no
 * caller is made to wait.
 */
import { randomUUID } from "node:crypto"
import { RedisTokenCache } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { ClientCredentials } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { describeRedis } from "./support/redisServer.js"

const credentials = { clientId: "ahead-client", clientSecret: "ahead-secret", authUrl: "http://127.0.0.1:9" }
const PROVIDERS = 4

describeRedis("refreshAhead with a shared RedisTokenCache", (server) => {
  it.scopedLive(
    `${PROVIDERS} providers renew ahead of expiry with one token request, serving the valid token meanwhile`,
    () =>
      Effect.gen(function* () {
        const key = `test:ahead:${randomUUID()}`
        // tokens live 4 s, stale 1 s before (3 s), renewed ahead from 2 s before that (1 s)
        const providers = yield* Effect.forEach(Array.from({ length: PROVIDERS }), () =>
          Effect.flatMap(RedisTokenCache.make({ url: server().url, key }), (tokenCache) =>
            ClientCredentials.make({ ...credentials, tokenCache, skew: "1 second", refreshAhead: "2 seconds" })
          )
        )
        const mock = yield* MockHttpClient
        const round = Effect.map(
          Effect.forEach(providers, (provider) => provider.getAccessToken, { concurrency: "unbounded" }),
          (tokens) => new Set(tokens.map(Redacted.value))
        )
        expect([...(yield* round)]).toEqual(["ahead-token-0"])
        expect((yield* mock.requests).length).toBe(1)

        yield* Effect.sleep("1300 millis")
        // inside the window: every provider serves the valid token and starts its renewal in the background
        expect([...(yield* round)]).toEqual(["ahead-token-0"])
        yield* Effect.sleep("800 millis")
        expect((yield* mock.requests).length).toBe(2)
        expect([...(yield* round)]).toEqual(["ahead-token-1"])
        expect((yield* mock.requests).length).toBe(2)
      }).pipe(
        Effect.provide(
          MockHttpClient.layer((_request, call) =>
            Effect.as(
              Effect.sleep("100 millis"),
              MockHttpClient.json({ access_token: `ahead-token-${call}`, token_type: "Bearer", expires_in: 4 })
            )
          )
        )
      ),
    20_000
  )
})
