/**
 * The fleet when all is well (issue test 1) and the one-process rules it relies on (tests 7 and 8): one token request
 * per expiry, short-lived tokens, two clients on one key. Tests 1 and 8 are `support/steadySuite.ts` (the Effect 4
 * line runs them with its own processes).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { RedisTokenCache } from "@service-sdk/redis"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { ClientCredentials } from "@service-sdk/effect"
import { scaled } from "../support/load.js"
import { tokenRequests, uniqueKey } from "./support/fleet.js"
import { describeSteady } from "./support/steadySuite.js"

describeSteady("the fleet, all well", undefined, (world) => {
  it.live(
    "7. one process, expires_in 10 with the default skew: 100 concurrent and 20 sequential calls, 1 request",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => world().emulator.configure({ tokenLifetime: 10 }))
        const before = (yield* Effect.promise(() => tokenRequests(world()))).total
        const tokenCache = yield* RedisTokenCache.make({ url: world().redis.url, key: uniqueKey() })
        const provider = yield* ClientCredentials.make({
          clientId: world().emulator.clientId,
          clientSecret: world().emulator.clientSecret,
          authUrl: world().emulator.authUrl,
          tokenCache
        })
        const started = Date.now()
        const herd = yield* Effect.all(
          Array.from({ length: 100 }, () => Effect.either(provider.getAccessToken)),
          { concurrency: "unbounded" }
        )
        let longest = Date.now() - started
        for (let call = 0; call < 20; call++) {
          const start = Date.now()
          yield* provider.getAccessToken
          longest = Math.max(longest, Date.now() - start)
        }
        const elapsed = Date.now() - started
        const requests = (yield* Effect.promise(() => tokenRequests(world()))).total - before
        expect(herd.filter((result) => result._tag === "Left")).toEqual([])
        const herdTokens = new Set(herd.map((result) => (result._tag === "Right" ? Redacted.value(result.right) : "")))
        // the short-lived token (10 s ≤ 2 × the 30 s skew) is renewed half-way through its life, never on every call:
        // one request, plus one per 5 s the calls lasted (none on a quiet machine, where they take well under 1 s)
        const most = 1 + Math.floor(elapsed / 5000)
        console.info(`one process, 120 calls over ${elapsed} ms: ${requests} token request(s), at most ${most}`)
        expect(requests).toBeGreaterThanOrEqual(1)
        expect(requests).toBeLessThanOrEqual(most)
        expect(herdTokens.size).toBeLessThanOrEqual(requests)
        expect(longest).toBeLessThan(scaled(2000))
        yield* Effect.promise(() => world().emulator.configure({ tokenLifetime: 3 }))
      }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
  )
})
