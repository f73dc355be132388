/**
 * The fleet when all is well with Effect 4 processes (the Effect 3 line's suite, `steadySuite.ts`: one token request
 * per expiry over 8 processes, two clients on one key), and the one-process rule it relies on, in this process:
 * a short-lived token is renewed half-way through its life, never on every call.
 */
import { expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { ClientCredentials } from "@service-sdk/effect"
import { tokenRequests, uniqueKey } from "../../../../redis/test/faults/support/fleet.js"
import { describeSteady } from "../../../../redis/test/faults/support/steadySuite.js"
import { scaled } from "../../../../redis/test/support/load.js"
import { faultWorkers } from "./support/workers.js"

describeSteady("the fleet, all well (Effect 4 processes)", [faultWorkers.effect4], (world) => {
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
          Array.from({ length: 100 }, () => Effect.result(provider.getAccessToken)),
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
        expect(herd.filter(Result.isFailure)).toEqual([])
        const herdTokens = new Set(
          herd.map((result) => (Result.isSuccess(result) ? Redacted.value(result.success) : ""))
        )
        // one request, plus one per 5 s the calls lasted (none on a quiet machine, where they take well under 1 s)
        const most = 1 + Math.floor(elapsed / 5000)
        console.info(
          `one Effect 4 process, 120 calls over ${elapsed} ms: ${requests} token request(s), at most ${most}`
        )
        expect(requests).toBeGreaterThanOrEqual(1)
        expect(requests).toBeLessThanOrEqual(most)
        expect(herdTokens.size).toBeLessThanOrEqual(requests)
        expect(longest).toBeLessThan(scaled(2000))
        yield* Effect.promise(() => world().emulator.configure({ tokenLifetime: 3 }))
      }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
  )
})
