import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Ref } from "effect"
import { ApiError, ServiceClient, TransportError } from "@service-sdk/effect"
import { apiRequests, clientLayer, ok, status } from "../ServiceClient.helpers.js"

// The request policy bounds attempts with a plain timer on the live clock (see requestPolicy.ts `withTimeout`);
// these tests run it on the real clock, with short bounded waits.
describe("ServiceClient per-attempt timeout on the live clock", () => {
  it.live("an attempt that never answers fails with TransportError after `timeout`, retried up to maxRetries", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.albums.get("a"))
      expect(error).toBeInstanceOf(TransportError)
      expect(error.message).toContain("did not answer")
      expect(yield* apiRequests).toHaveLength(2)
    }).pipe(Effect.provide(clientLayer(() => Effect.never, { timeout: "100 millis", maxRetries: 1 })))
  )

  it.live("a slow first attempt times out and the retry's answer wins", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const body = yield* client.request("GET", "/anything")
      expect(body).toEqual({ ok: true })
      expect(yield* apiRequests).toHaveLength(2)
    }).pipe(
      Effect.provide(
        clientLayer((_request, call) => (call === 0 ? Effect.never : ok()), { timeout: "100 millis", maxRetries: 2 })
      )
    )
  )

  it.live("a fast answer is not affected by the timer, and errors keep their class", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.request("GET", "/missing"))
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({ status: 404 })
      expect(yield* apiRequests).toHaveLength(1)
    }).pipe(Effect.provide(clientLayer(() => status(404), { timeout: "5 seconds" })))
  )

  it.live("interrupting the caller interrupts the attempt in flight", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Ref.make(false)
      const handler = () =>
        Effect.zipRight(
          Deferred.succeed(started, undefined),
          Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
        )
      const outcome = yield* Effect.gen(function* () {
        const client = yield* ServiceClient
        const fiber = yield* Effect.fork(client.request("GET", "/slow"))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        return yield* Fiber.await(fiber)
      }).pipe(Effect.provide(clientLayer(handler, { timeout: "10 seconds" })))
      expect(Exit.isInterrupted(outcome)).toBe(true)
      expect(yield* Ref.get(interrupted)).toBe(true)
    })
  )
})
