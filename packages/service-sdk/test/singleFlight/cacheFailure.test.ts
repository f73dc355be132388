import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel, Option, Redacted, Ref } from "effect"
import {
  AuthorizationCode,
  ClientCredentials,
  type TokenCache,
  TokenCacheError,
  type TokenInfo
} from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"

/** A cache whose `set` always fails; `get` returns what `seed` holds. */
const brokenCache = (seed: Ref.Ref<Option.Option<TokenInfo>>): TokenCache.TokenCache => ({
  get: Ref.get(seed),
  set: () => Effect.fail(new TokenCacheError({ message: "disk full" }))
})

const logLines = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => {
      lines.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
  )

describe("a cache that cannot store", () => {
  it.scoped("a renewal still serves its token, warns without the token, and the next call makes no request", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const seed = yield* Ref.make(Option.none<TokenInfo>())
      const provider = yield* ClientCredentials.make({
        clientId: "id",
        clientSecret: "secret",
        tokenCache: brokenCache(seed)
      }).pipe(Effect.provide(logLines(lines)))
      const first = yield* provider.getAccessToken.pipe(
        Effect.provide(logLines(lines)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
      const second = yield* provider.getAccessToken
      const requests = yield* (yield* MockHttpClient).requests
      expect(Redacted.value(first)).toBe("canary-access-token")
      expect(Redacted.value(second)).toBe("canary-access-token")
      expect(requests).toHaveLength(1)
      expect(lines.some((line) => line.includes("not cached") && line.includes("disk full"))).toBe(true)
      expect(lines.some((line) => line.includes("canary-access-token"))).toBe(false)
    }).pipe(
      Effect.provide(
        MockHttpClient.layer(() => MockHttpClient.json({ access_token: "canary-access-token", expires_in: 3600 }))
      )
    )
  )

  it.effect("exchangeCode surfaces TokenCacheError (a login that was not saved), yet loses nothing in memory", () =>
    Effect.gen(function* () {
      const seed = yield* Ref.make(Option.none<TokenInfo>())
      const layer = AuthorizationCode.layer({
        clientId: "id",
        clientSecret: "secret",
        redirectUri: "http://127.0.0.1:8080/callback",
        tokenCache: brokenCache(seed)
      })
      const { error, token, requests } = yield* Effect.gen(function* () {
        const provider = yield* AuthorizationCode
        const error = yield* Effect.flip(provider.exchangeCode("code"))
        const token = yield* provider.getAccessToken
        const requests = yield* (yield* MockHttpClient).requests
        return { error, token, requests }
      }).pipe(Effect.provide(layer))
      expect(error).toBeInstanceOf(TokenCacheError)
      expect(Redacted.value(token)).toBe("user-token")
      expect(requests).toHaveLength(1)
    }).pipe(
      Effect.provide(
        MockHttpClient.layer(() =>
          MockHttpClient.json({ access_token: "user-token", refresh_token: "refresh", expires_in: 3600 })
        )
      )
    )
  )
})
