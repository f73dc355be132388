import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as AttemptBound from "../src/internal/client/attemptBound.js"

// The bound hands its AbortController to the platform through `@effect/platform`'s private registry of scoped
// requests. These tests fail when an upgrade moves or drops it (the client would then fall back to forked timers).
describe("the attempt bound reaches the platform's clients", () => {
  it("the registry is @effect/platform's own", () => {
    expect(AttemptBound.isConnected()).toBe(true)
  })

  it.effect(
    "a client made with HttpClient.make is given the attempt's signal, and aborting it aborts the request",
    () =>
      Effect.gen(function* () {
        const seen: Array<AbortSignal> = []
        const client = HttpClient.make((request, _url, signal) => {
          seen.push(signal)
          return Effect.succeed(HttpClientResponse.fromWeb(request, new Response("ok")))
        })
        const request = HttpClientRequest.get("http://127.0.0.1:1/x")
        const bound = yield* AttemptBound.arm(request, Duration.minutes(1))
        yield* client.execute(request)
        expect(seen).toHaveLength(1)
        expect(seen[0]).toBe(bound.controller.signal)
        expect(seen[0]!.aborted).toBe(false)
        bound.abort()
        expect(seen[0]!.aborted).toBe(true)
        // another request is not affected
        yield* client.execute(HttpClientRequest.get("http://127.0.0.1:1/y"))
        expect(seen[1]).not.toBe(bound.controller.signal)
      })
  )
})
