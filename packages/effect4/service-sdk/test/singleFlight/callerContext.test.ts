/**
 * Single flight and the caller's context: a renewal's waiters go on in jobs of their own (each waiter's own
 * subscription to the renewal), never synchronously inside the job that delivered the leader's token response. A
 * Cloudflare Worker runs a job in the I/O context of the request it belongs to, so a waiter that went on inside the
 * leader's job went on inside the leader's request, and workerd cancelled it (docs/runtimes.md; the Worker itself is
 * tested in packages/effect4/runtimes, workerd). Node's `AsyncLocalStorage` cannot show it on this line: its fibers
 * re-enter the async context they yielded in.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import * as SingleFlight from "../../src/internal/singleFlight.js"

describe("single flight: the caller's context", () => {
  it.effect("the waiters of a renewal go on in jobs of their own, not inside the job that ends the renewal", () =>
    Effect.gen(function* () {
      /** Delivers the token response to the leader (its renewal waits for it). */
      let deliver: ((token: TokenInfo) => void) | undefined
      let renewals = 0
      const flight = yield* SingleFlight.make({
        name: "Test",
        cache: yield* TokenCache.memory(),
        skewMillis: 1_000,
        renew: (_current: Option.Option<TokenInfo>) =>
          Effect.callback<TokenInfo>((resume) => {
            renewals++
            deliver = (token) => resume(Effect.succeed(token))
          }),
        accepts: () => true,
        whenCacheDown: "local",
        entryGone: "keep"
      })
      /** Whether the job that delivers the leader's token response is running. */
      let inLeadersJob = false
      const callers = yield* Effect.forEach(Array.from({ length: 10 }), () =>
        Effect.forkChild(Effect.map(flight.getAccessToken, (token) => ({ token: Redacted.value(token), inLeadersJob })))
      )
      for (let i = 0; i < 100 && deliver === undefined; i++) yield* Effect.yieldNow
      assert.strictEqual(renewals, 1)
      const expiresAt = Date.now() / 1000 + 3600
      // the leader's I/O completes: whatever runs synchronously here runs in the leader's request
      yield* Effect.sync(() => {
        inLeadersJob = true
        try {
          deliver!(new TokenInfo({ accessToken: Redacted.make("token-1"), expiresAt }))
        } finally {
          inLeadersJob = false
        }
      })
      const seen = yield* Effect.forEach(callers, (fiber) => Fiber.join(fiber))
      // the leader (the first caller) is served in its own job; each waiter in one of its own
      assert.deepStrictEqual(
        seen.slice(1),
        Array.from({ length: 9 }, () => ({ token: "token-1", inLeadersJob: false }))
      )
      assert.strictEqual(renewals, 1)
    })
  )
})
