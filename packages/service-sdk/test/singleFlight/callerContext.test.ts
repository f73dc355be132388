/**
 * Single flight and the caller's context: each waiter of a renewal goes on in its own caller's asynchronous context
 * (its own subscription to the renewal), never in a job the leader's fiber scheduled. A Cloudflare Worker runs each
 * request's jobs in that request's I/O context and cancels a request whose code goes on inside another request's
 * (docs/runtimes.md); here each caller runs in its own `AsyncLocalStorage` context, which follows jobs the same way.
 * (The Effect 4 line's fibers re-enter the async context they yielded in, so Node cannot show it there; that line is
 * tested in a Worker: packages/effect4/runtimes, workerd.)
 */
import { AsyncLocalStorage } from "node:async_hooks"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { ClientCredentials, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, tokenResponse } from "../fixtures.js"

describe("single flight: the caller's context", () => {
  it("50 concurrent callers, each in its own context: one token request, each goes on in its own context", async () => {
    let tokenRequests = 0
    // the token endpoint answers after a real timer, started in the leader's context
    const runtime = ManagedRuntime.make(
      ClientCredentials.layer(credentials).pipe(
        Layer.provide(
          MockHttpClient.layer(() => {
            tokenRequests++
            return Effect.delay(Effect.succeed(tokenResponse("tok-1")), "50 millis")
          })
        )
      )
    )
    try {
      const caller = new AsyncLocalStorage<number>()
      const seen = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          caller.run(i, () =>
            runtime.runPromise(
              Effect.gen(function* () {
                const provider = yield* TokenProvider
                const token = yield* provider.getAccessToken
                return { token: Redacted.value(token), context: caller.getStore() }
              })
            )
          )
        )
      )
      expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => ({ token: "tok-1", context: i })))
      expect(tokenRequests).toBe(1)
    } finally {
      await runtime.dispose()
    }
  })
})
