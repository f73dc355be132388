import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Option, TestClock } from "effect"
import { TokenProvider, TransportError } from "@service-sdk/effect"
import { MockHttpClient, type MockResponse } from "@service-sdk/effect/testing"
import { backoff, parseRetryAfter } from "../../src/internal/retry.js"
import {
  authorizationCodeLayer,
  clientCredentialsLayer,
  expectTokenRequests,
  oauthError,
  tokenResponse,
  value
} from "../fixtures.js"

const fetchOne = Effect.flatMap(TokenProvider, (provider) => provider.getAccessToken)

/** A handler that answers `answer` and notes the Clock time of every request. */
const timed = (answer: MockResponse | Effect.Effect<MockResponse>) => {
  const times: Array<number> = []
  const handler = () =>
    Effect.zipRight(
      Effect.map(Clock.currentTimeMillis, (now) => times.push(now)),
      Effect.isEffect(answer) ? answer : Effect.succeed(answer)
    )
  return { times, handler }
}

/**
 * Steps the TestClock through every retry: just before the earliest moment the next attempt may start (50 % of the
 * backoff) there must be no new request, and at the latest moment (100 %) there must be one.
 */
const stepThroughRetries = (times: Array<number>, retries: number, attemptMillis = 0) =>
  Effect.gen(function* () {
    for (let retry = 0; retry < retries; retry++) {
      const base = Math.min(500 * 2 ** retry, 8_000)
      const previous = times[retry]!
      yield* TestClock.setTime(previous + attemptMillis + base / 2 - 1)
      expect(times, `retry ${retry + 1} came before 50 % of its backoff`).toHaveLength(retry + 1)
      yield* TestClock.setTime(previous + attemptMillis + base)
      expect(times, `retry ${retry + 1} did not come by 100 % of its backoff`).toHaveLength(retry + 2)
      const gap = times[retry + 1]! - previous - attemptMillis
      expect(gap).toBeGreaterThanOrEqual(base / 2)
      expect(gap).toBeLessThanOrEqual(base)
    }
  })

describe("token endpoint retry policy", () => {
  it.effect.each([
    ["500", { status: 500 } as MockResponse, 500, 0],
    ["503", { status: 503, body: "busy" } as MockResponse, 503, 0],
    ["429 without Retry-After", MockHttpClient.json({ error: "slow_down" }, 429), 429, 0],
    ["a connection error", { transportError: "connect ECONNREFUSED 127.0.0.1:4010" } as MockResponse, undefined, 0],
    ["a timeout", Effect.never as Effect.Effect<MockResponse>, undefined, 1000]
  ] as const)("%s: 4 attempts by default, jittered backoff, then TransportError", ([, answer, status, attemptMillis]) =>
    Effect.gen(function* () {
      const { handler, times } = timed(answer)
      const fiber = yield* Effect.fork(
        fetchOne.pipe(Effect.provide(clientCredentialsLayer(handler, { timeout: "1 second" })))
      )
      yield* TestClock.adjust(0)
      expect(times).toEqual([0])
      yield* stepThroughRetries(times, 3, attemptMillis)
      yield* TestClock.adjust("1 minute")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(times).toHaveLength(4)
      expect(error).toBeInstanceOf(TransportError)
      expect((error as TransportError).status).toBe(status)
      if (attemptMillis > 0) expect(error.message).toContain("timed out")
      if (status === undefined && attemptMillis === 0) expect(error.message).toContain("ECONNREFUSED")
    })
  )

  it.effect.each([0, 1, 5])("maxRetries %s makes maxRetries + 1 attempts", (maxRetries) =>
    Effect.gen(function* () {
      const { handler, times } = timed({ status: 502 })
      const fiber = yield* Effect.fork(fetchOne.pipe(Effect.provide(clientCredentialsLayer(handler, { maxRetries }))))
      yield* TestClock.adjust("10 minutes")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(times).toHaveLength(maxRetries + 1)
      expect((error as TransportError).status).toBe(502)
    })
  )

  it.effect("the backoff doubles from 0.5 s and is capped at 8 s", () =>
    Effect.gen(function* () {
      const { handler, times } = timed({ status: 500 })
      const fiber = yield* Effect.fork(
        fetchOne.pipe(Effect.provide(clientCredentialsLayer(handler, { maxRetries: 6 })))
      )
      yield* TestClock.adjust(0)
      yield* stepThroughRetries(times, 6)
      expect(times).toHaveLength(7)
      const gaps = times.slice(1).map((time, i) => time - times[i]!)
      expect(gaps[4]).toBeGreaterThanOrEqual(4_000)
      expect(gaps[5]).toBeLessThanOrEqual(8_000)
      yield* Effect.flip(Fiber.join(fiber))
    })
  )

  it.effect("a retry that succeeds returns the token", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(fetchOne)
      yield* TestClock.adjust("1 minute")
      const token = yield* Fiber.join(fiber)
      expect(value(token)).toBe("recovered")
      yield* expectTokenRequests(3)
    }).pipe(
      Effect.provide(
        clientCredentialsLayer(
          MockHttpClient.script({ status: 500 }, { transportError: "socket hang up" }, tokenResponse("recovered"))
        )
      )
    )
  )

  it.effect.each([
    ["429 Retry-After in seconds", 429, "2", 2_000],
    ["503 Retry-After in seconds", 503, "3", 3_000],
    ["429 Retry-After as an HTTP date", 429, new Date(5_000).toUTCString(), 5_000],
    ["503 Retry-After as an HTTP date", 503, new Date(4_000).toUTCString(), 4_000]
  ] as const)("%s is honoured exactly", ([, status, header, wait]) =>
    Effect.gen(function* () {
      const { handler, times } = timed({ status, headers: { "retry-after": header } })
      const fiber = yield* Effect.fork(
        fetchOne.pipe(Effect.provide(clientCredentialsLayer(handler, { maxRetries: 1 })))
      )
      yield* TestClock.adjust(0)
      yield* TestClock.setTime(wait - 1)
      expect(times).toEqual([0])
      yield* TestClock.setTime(wait)
      expect(times).toEqual([0, wait])
      const error = (yield* Effect.flip(Fiber.join(fiber))) as TransportError
      expect(error.status).toBe(status)
    })
  )

  it.effect("Retry-After on a 500 is not honoured (the backoff applies)", () =>
    Effect.gen(function* () {
      const { handler, times } = timed({ status: 500, headers: { "retry-after": "30" } })
      const fiber = yield* Effect.fork(
        fetchOne.pipe(Effect.provide(clientCredentialsLayer(handler, { maxRetries: 1 })))
      )
      yield* TestClock.adjust(0)
      yield* TestClock.setTime(500)
      expect(times).toHaveLength(2)
      yield* Effect.flip(Fiber.join(fiber))
    })
  )

  it.effect("a Retry-After longer than 60 s fails at once with TransportError", () =>
    Effect.gen(function* () {
      const { handler, times } = timed({ status: 429, headers: { "retry-after": "3600" } })
      const error = yield* Effect.flip(fetchOne.pipe(Effect.provide(clientCredentialsLayer(handler))))
      expect(times).toHaveLength(1)
      expect(error._tag).toBe("TransportError")
      expect((error as TransportError).status).toBe(429)
    })
  )

  it.effect.each([
    [400, "invalid_grant"],
    [401, "invalid_client"],
    [400, "invalid_request"]
  ] as const)("%s %s is never retried", ([status, code]) =>
    Effect.gen(function* () {
      const { handler, times } = timed(oauthError(status, code))
      const fiber = yield* Effect.fork(
        fetchOne.pipe(Effect.provide(authorizationCodeLayer(handler, { refreshToken: "r", maxRetries: 5 })))
      )
      yield* TestClock.adjust("10 minutes")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(times).toHaveLength(1)
      expect(error._tag).toBe("AuthenticationError")
    })
  )
})

describe("retry helpers", () => {
  it("backoff is 0.5 s × 2^attempt capped at 8 s", () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((attempt) => Duration.toMillis(backoff(attempt)))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000
    ])
  })

  it.effect("parseRetryAfter reads delta-seconds and HTTP dates, and nothing else", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(10_000)
      const read = (header: string | undefined) => Effect.map(parseRetryAfter(header), Option.map(Duration.toMillis))
      expect(yield* read("7")).toEqual(Option.some(7_000))
      expect(yield* read(" 0 ")).toEqual(Option.some(0))
      expect(yield* read(new Date(25_000).toUTCString())).toEqual(Option.some(15_000))
      expect(yield* read(new Date(1_000).toUTCString())).toEqual(Option.some(0))
      expect(yield* read(undefined)).toEqual(Option.none())
      expect(yield* read("-1")).toEqual(Option.none())
      expect(yield* read("1.5")).toEqual(Option.none())
      expect(yield* read("soon")).toEqual(Option.none())
    })
  )
})
