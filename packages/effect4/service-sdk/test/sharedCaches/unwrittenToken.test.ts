/**
 * A rotated refresh token never lives only in one process's memory (DESIGN section 4): a write of a renewal that
 * failed (the cache unreachable) is retried in the background until it lands; the token is served meanwhile.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { AuthorizationCode, TokenCache, TokenCacheError, TokenInfo } from "@service-sdk/effect"
import { credentials, issuing, mock } from "../support/mock.js"

describe("a renewal whose write failed", () => {
  it.effect("is served at once and written in the background once the cache answers", () =>
    Effect.gen(function* () {
      const inner = yield* TokenCache.memory(
        new TokenInfo({ accessToken: Redacted.make("old"), expiresAt: 0, refreshToken: Redacted.make("rt-0") })
      )
      let failures = 3
      const flaky: TokenCache.TokenCache = {
        ...inner,
        compareAndSet: (expected, next) =>
          failures-- > 0
            ? Effect.fail(new TokenCacheError({ message: "cache unreachable" }))
            : inner.compareAndSet!(expected, next)
      }
      const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: flaky })
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      const before = yield* inner.get
      assert.strictEqual(Option.isSome(before) && Redacted.value(before.value.accessToken), "old")
      // tries at 0.25, 0.75 and 1.25 s (then every 0.5 s): the third lands within a failover's 2 s settle
      yield* TestClock.adjust("1300 millis")
      const after = yield* inner.get
      assert.strictEqual(Option.isSome(after) && Redacted.value(after.value.refreshToken!), "rt-new")
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "rt-new" }))))
  )
  it.effect("is tried for as long as the cache cannot be reached (here 60 tries, 30 s), then written", () =>
    Effect.gen(function* () {
      const inner = yield* TokenCache.memory(
        new TokenInfo({ accessToken: Redacted.make("old"), expiresAt: 0, refreshToken: Redacted.make("rt-0") })
      )
      let failures = 61
      const down: TokenCache.TokenCache = {
        ...inner,
        compareAndSet: (expected, next) =>
          failures-- > 0
            ? Effect.fail(new TokenCacheError({ message: "cache unreachable" }))
            : inner.compareAndSet!(expected, next)
      }
      const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: down })
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      // a try every 0.5 s: 60 background tries take 30 s
      yield* TestClock.adjust("31 seconds")
      const after = yield* inner.get
      assert.strictEqual(Option.isSome(after) && Redacted.value(after.value.refreshToken!), "rt-new")
    }).pipe(Effect.provide(mock(issuing({ refresh_token: "rt-new" }))))
  )
})
