/**
 * A shared cache that cannot be reached (DESIGN section 4): ClientCredentials renews in this process alone (a warning
 * is logged, sharing resumes when the cache answers); AuthorizationCode fails with TokenCacheError.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AuthorizationCode, ClientCredentials, TokenCache, TokenCacheError, TokenInfo } from "@service-sdk/effect"
import { credentials, issuing, mock, requests } from "../support/mock.js"

const down = new TokenCacheError({ message: "Redis GET on redis://127.0.0.1:1 did not answer within 5 s" })
const unreachable: TokenCache.TokenCache = {
  get: Effect.fail(down),
  set: () => Effect.fail(down),
  withLock: () => Effect.fail(down),
  compareAndSet: () => Effect.fail(down)
}

describe("the shared cache is unreachable", () => {
  it.effect("ClientCredentials renews in this process alone, once for concurrent callers", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, tokenCache: unreachable })
      const tokens = yield* Effect.all(
        Array.from({ length: 10 }, () => provider.getAccessToken),
        {
          concurrency: "unbounded"
        }
      )
      assert.isTrue(tokens.every((token) => Redacted.value(token) === "token-1"))
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("AuthorizationCode fails with TokenCacheError (a shared refresh token is not used outside the lock)", () =>
    Effect.gen(function* () {
      const inner = yield* TokenCache.memory(
        new TokenInfo({ accessToken: Redacted.make("a"), expiresAt: 0, refreshToken: Redacted.make("r") })
      )
      const provider = yield* AuthorizationCode.make({
        ...credentials,
        tokenCache: { ...inner, withLock: () => Effect.fail(down) }
      })
      const error = yield* Effect.flip(provider.getAccessToken)
      assert.strictEqual(error._tag, "TokenCacheError")
      assert.strictEqual((yield* requests).length, 0)
      const entry = yield* inner.get
      assert.strictEqual(Option.isSome(entry) && Redacted.value(entry.value.refreshToken!), "r")
    }).pipe(Effect.provide(mock(issuing())))
  )
})
