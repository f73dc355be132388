/**
 * The request policy's fallback bound (a forked timer per attempt, and a timer per body read), used when
 * `@effect/platform`'s registry does not reach its clients (see attemptBound.ts). Live clock, short waits.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { TransportError } from "service-sdk"
import { type MockHandler, MockHttpClient } from "service-sdk/testing"
import * as RequestPolicy from "../src/internal/client/requestPolicy.js"
import { API_URL, ok } from "./ServiceClient.helpers.js"

const policy = (handler: MockHandler) =>
  Effect.map(HttpClient.HttpClient, (http) =>
    RequestPolicy.make(
      { apiUrl: API_URL, timeout: Duration.millis(100), maxRetries: 1, maxRetryAfter: Duration.seconds(60) },
      { getAccessToken: Effect.succeed(Redacted.make("fixed-token")) },
      http,
      "timer"
    )
  ).pipe(Effect.provide(MockHttpClient.layer(handler)))

describe("request policy, fallback bound (live clock)", () => {
  it.live("an attempt that never answers is cut at `timeout` and retried; the last one fails with TransportError", () =>
    Effect.gen(function* () {
      let calls = 0
      const client = yield* policy(() => {
        calls++
        return Effect.never
      })
      const error = yield* Effect.flip(client.get("/albums/a"))
      expect(error).toBeInstanceOf(TransportError)
      expect(error.message).toContain("did not answer")
      expect(calls).toBe(2)
    })
  )

  it.live("a slow first attempt is cut and the retry answers", () =>
    Effect.gen(function* () {
      const client = yield* policy((_request, call) => (call === 0 ? Effect.never : ok({ id: "a" })))
      const response = yield* client.get("/albums/a")
      expect(yield* response.json).toEqual({ id: "a" })
    })
  )
})
