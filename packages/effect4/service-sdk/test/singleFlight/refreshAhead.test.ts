/** refreshAhead (DESIGN section 3): a background renewal before staleness; callers are served without waiting. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { ClientCredentials } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, issuing, mock, requests } from "../support/mock.js"

describe("refreshAhead", () => {
  it.effect("within refreshAhead of staleness the caller gets the current token and one renewal starts", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, skew: "30 seconds", refreshAhead: "60 seconds" })
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      // stale at 3570 s; ahead from 3510 s
      yield* TestClock.adjust("3509 seconds")
      yield* provider.getAccessToken
      assert.strictEqual((yield* requests).length, 1)
      yield* TestClock.adjust("2 seconds")
      const served = yield* Effect.all(
        Array.from({ length: 10 }, () => provider.getAccessToken),
        { concurrency: "unbounded" }
      )
      assert.isTrue(served.every((token) => Redacted.value(token) === "token-1"))
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* requests).length, 2)
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-2")
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("a failed background renewal is not fatal: the token is served, the normal path renews at staleness", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, refreshAhead: "60 seconds", maxRetries: 0 })
      yield* provider.getAccessToken
      const control = yield* MockHttpClient
      yield* control.setHandler(() => ({ status: 500 }))
      yield* TestClock.adjust("3520 seconds")
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* requests).length, 2)
      // one try per token ahead of staleness
      yield* provider.getAccessToken
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* requests).length, 2)
      yield* control.setHandler(issuing())
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-3")
      assert.strictEqual((yield* requests).length, 3)
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("refreshAhead must be a positive duration", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(ClientCredentials.make({ ...credentials, refreshAhead: 0 }))
      assert.match(error.message, /refreshAhead/)
    }).pipe(Effect.provide(mock(issuing())))
  )
})
