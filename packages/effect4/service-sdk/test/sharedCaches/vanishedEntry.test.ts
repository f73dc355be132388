/**
 * An entry that vanished under a holder of a refresh token (FLUSHALL, a restarted store): with a locked cache,
 * `AuthorizationCode` lets go of the lock, waits a grace and renews only if the entry is still gone, so that a
 * renewal under way elsewhere (whose lock vanished with the store) stores its rotated refresh token first.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { AuthorizationCode, TokenCache, TokenInfo } from "@service-sdk/effect"
import { credentials, issuing, mock, requests } from "../support/mock.js"

const token = (access: string, refresh: string, expiresAt: number) =>
  new TokenInfo({ accessToken: Redacted.make(access), expiresAt, refreshToken: Redacted.make(refresh) })

/** A memory cache with a (trivial) fleet lock, the provider's copy of the entry served once, then the entry gone. */
const vanished = Effect.gen(function* () {
  const inner = yield* TokenCache.memory(token("at-0", "rt-0", 100))
  const shared: TokenCache.TokenCache = { ...inner, withLock: (self) => self }
  const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: shared })
  assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "at-0")
  yield* inner.clear!
  yield* TestClock.adjust("80 seconds") // past the token's staleness (skew 30 s)
  return { inner, provider }
})

describe("an entry that vanished under a holder of a refresh token", () => {
  it.effect("serves the token another process stores within the grace, without a request", () =>
    Effect.gen(function* () {
      const { inner, provider } = yield* vanished
      const call = yield* Effect.forkChild(provider.getAccessToken)
      yield* TestClock.adjust("1 second")
      yield* inner.set(token("at-other", "rt-other", 1000))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(Redacted.value(yield* Fiber.join(call)), "at-other")
      assert.strictEqual((yield* requests).length, 0)
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "rt-new" }))))
  )

  it.effect("renews after the grace when the entry is still gone, and stores the token", () =>
    Effect.gen(function* () {
      const { inner, provider } = yield* vanished
      const call = yield* Effect.forkChild(provider.getAccessToken)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* requests).length, 0)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(Redacted.value(yield* Fiber.join(call)), "token-1")
      assert.strictEqual((yield* requests).length, 1)
      const stored = yield* inner.get
      assert.strictEqual(stored._tag === "Some" && Redacted.value(stored.value.refreshToken!), "rt-new")
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "rt-new" }))))
  )
})
