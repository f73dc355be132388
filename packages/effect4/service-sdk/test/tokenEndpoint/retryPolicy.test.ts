/** The retry policy of token calls (DESIGN section 4): backoff, Retry-After, final 4xx. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { OAuthClient } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, issuing, mock, requests } from "../support/mock.js"

const failingThen = (failures: ReadonlyArray<Parameters<typeof MockHttpClient.json>[1] | "reset">) =>
  mock((request, call) =>
    call < failures.length
      ? failures[call] === "reset"
        ? { transportError: "ECONNRESET" }
        : { status: failures[call] as number, headers: { "retry-after": "7" } }
      : issuing()(request, call)
  )

describe("token call retries", () => {
  it.effect("5xx and connection resets are retried with backoff (0.5 s × 2^n, jittered 50–100 %)", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...credentials, maxRetries: 3 })
      const fiber = yield* Effect.forkChild(oauth.clientCredentials())
      // before any backoff could have elapsed (the first delay is at least 250 ms): one attempt
      yield* TestClock.adjust("249 millis")
      assert.strictEqual((yield* requests).length, 1)
      // 0.5 + 1 + 2 s at most
      yield* TestClock.adjust("3.5 seconds")
      const token = yield* Fiber.join(fiber)
      assert.strictEqual(Redacted.value(token.accessToken), "token-4")
      assert.strictEqual((yield* requests).length, 4)
    }).pipe(Effect.provide(failingThen([500, "reset", 502])))
  )

  it.effect("retries run out: the last TransportError surfaces after maxRetries + 1 attempts", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...credentials, maxRetries: 2 })
      const fiber = yield* Effect.forkChild(Effect.flip(oauth.clientCredentials()))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual((yield* requests).length, 3)
    }).pipe(Effect.provide(mock(() => ({ status: 500 }))))
  )

  it.effect("429 honours Retry-After in seconds (exactly: no jitter)", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make(credentials)
      const fiber = yield* Effect.forkChild(oauth.clientCredentials())
      yield* TestClock.adjust("6999 millis")
      assert.strictEqual((yield* requests).length, 1)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(Effect.provide(failingThen([429])))
  )

  it.effect("a Retry-After longer than 60 s fails at once with TransportError", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make(credentials)
      const error = yield* Effect.flip(oauth.clientCredentials())
      assert.strictEqual(error._tag, "TransportError")
      assert.match(error.message, /retry after/)
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(mock(() => ({ status: 503, headers: { "retry-after": "120" } }))))
  )

  it.effect("4xx OAuth errors are never retried", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make(credentials)
      const error = yield* Effect.flip(oauth.clientCredentials())
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.deepStrictEqual(error._tag === "AuthenticationError" && error.payload, {
        error: "invalid_client",
        error_description: "bad secret"
      })
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(
      Effect.provide(mock(() => MockHttpClient.json({ error: "invalid_client", error_description: "bad secret" }, 401)))
    )
  )

  it.effect("each attempt has `timeout`; a timed-out attempt is retried", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...credentials, timeout: "1 second", maxRetries: 1 })
      const fiber = yield* Effect.forkChild(oauth.clientCredentials())
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("1 second")
      const token = yield* Fiber.join(fiber)
      assert.strictEqual(Redacted.value(token.accessToken), "token-2")
    }).pipe(
      Effect.provide(
        mock((request, call) => (call === 0 ? Effect.never : Effect.succeed(issuing()(request, call) as never)))
      )
    )
  )

  it.effect("a malformed token response is an AuthenticationError that echoes no value", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make(credentials)
      const error = yield* Effect.flip(oauth.clientCredentials())
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.match(error.message, /malformed token response \(200\): invalid or missing expires_in/)
      assert.notInclude(error.message, "leaky-token-value")
    }).pipe(Effect.provide(mock(() => MockHttpClient.json({ access_token: "leaky-token-value" }))))
  )
})
