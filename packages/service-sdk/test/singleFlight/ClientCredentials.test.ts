import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { ClientCredentials, TokenCache, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient, TestTokenProvider } from "@service-sdk/effect/testing"
import {
  clientCredentialsLayer,
  credentials,
  expectTokenRequests,
  numberedTokens,
  requestCount,
  requests,
  tokenInfo,
  value
} from "../fixtures.js"

const getToken = Effect.flatMap(TokenProvider, (provider) => provider.getAccessToken).pipe(Effect.map(value))

describe("ClientCredentials", () => {
  it.effect("fetches once, then serves the cached token", () =>
    Effect.gen(function* () {
      expect(yield* getToken).toBe("tok-1")
      expect(yield* getToken).toBe("tok-1")
      expect(yield* getToken).toBe("tok-1")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("the token is served until one second before expiresAt - skew, and renewed one second after", () =>
    Effect.gen(function* () {
      expect(yield* getToken).toBe("tok-1") // expiresAt = 3600 s, stale from 3570 s
      yield* TestClock.setTime(3_569_000)
      expect(yield* getToken).toBe("tok-1")
      yield* expectTokenRequests(1)
      yield* TestClock.setTime(3_571_000)
      expect(yield* getToken).toBe("tok-2")
      yield* expectTokenRequests(2)
      expect(yield* getToken).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("the skew option moves the boundary", () =>
    Effect.gen(function* () {
      yield* getToken // expiresAt = 3600 s, skew 10 min: stale from 3000 s
      yield* TestClock.setTime(2_999_000)
      expect(yield* getToken).toBe("tok-1")
      yield* TestClock.setTime(3_001_000)
      expect(yield* getToken).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { skew: "10 minutes" })))
  )

  it.effect(
    "a token whose lifetime is shorter than twice the skew is renewed at half its lifetime, not on every call",
    () =>
      Effect.gen(function* () {
        const herd = yield* Effect.all(
          Array.from({ length: 100 }, () => getToken),
          { concurrency: "unbounded" }
        )
        expect(new Set(herd)).toEqual(new Set(["tok-1"]))
        for (let call = 0; call < 20; call++) expect(yield* getToken).toBe("tok-1")
        yield* expectTokenRequests(1)
        yield* TestClock.adjust("4900 millis")
        expect(yield* getToken).toBe("tok-1")
        yield* TestClock.adjust("100 millis")
        expect(yield* getToken).toBe("tok-2")
        yield* expectTokenRequests(2)
      }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens({ expires_in: 10 }))))
  )

  it.effect("a fresh token in the given cache is used without a request; a stale one is replaced", () =>
    Effect.gen(function* () {
      const fresh = yield* TokenCache.memory(tokenInfo("from-cache", 100))
      const viaFresh = yield* getToken.pipe(
        Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: fresh }))
      )
      expect(viaFresh).toBe("from-cache")

      const stale = yield* TokenCache.memory(tokenInfo("old", 20))
      const viaStale = yield* Effect.zip(getToken, requestCount).pipe(
        Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: stale }))
      )
      expect(viaStale).toEqual(["tok-1", 1])
      const stored = Option.getOrThrow(yield* stale.get)
      expect(value(stored.accessToken)).toBe("tok-1")
      expect(stored.expiresAt).toBe(3600)
    })
  )

  it.effect("the cache entry records the requested scope when the response has none", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* getToken.pipe(
        Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache, scope: "x,y" }))
      )
      expect(Option.getOrThrow(yield* cache.get).scope).toBe("x y")
    })
  )
})

describe("TokenProvider.static and TestTokenProvider", () => {
  it.effect("TokenProvider.static serves the fixed token, and forceRefresh fails", () =>
    Effect.gen(function* () {
      for (const input of ["static-Q9", Redacted.make("static-Q9")]) {
        const provider = TokenProvider.static(input)
        const token = yield* provider.getAccessToken
        expect(Redacted.isRedacted(token)).toBe(true)
        expect(value(token)).toBe("static-Q9")
        const error = yield* Effect.flip(provider.forceRefresh(token))
        expect(error._tag).toBe("AuthenticationError")
        expect(error.message).not.toContain("static-Q9")
      }
    })
  )

  it.effect("TestTokenProvider.layer provides a TokenProvider", () =>
    Effect.gen(function* () {
      expect(yield* getToken).toBe("test-token")
    }).pipe(Effect.provide(TestTokenProvider.layer("test-token")))
  )

  it.effect("TokenProvider.layerStatic provides a TokenProvider", () =>
    Effect.gen(function* () {
      expect(yield* getToken).toBe("layer-token")
    }).pipe(Effect.provide(TokenProvider.layerStatic(Redacted.make("layer-token"))))
  )
})

describe("MockHttpClient", () => {
  it.scoped("records method, url, lower-cased headers, body and form", () =>
    Effect.gen(function* () {
      yield* ClientCredentials.make({ ...credentials, scope: "s" }).pipe(Effect.flatMap((p) => p.getAccessToken))
      const [request] = yield* requests
      expect(request!.method).toBe("POST")
      expect(request!.url).toBeInstanceOf(URL)
      expect(Object.keys(request!.headers).every((name) => name === name.toLowerCase())).toBe(true)
      expect(request!.body).toBe("grant_type=client_credentials&scope=s")
      expect(request!.form.get("scope")).toBe("s")
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )

  it.scoped("script answers in turn and repeats the last; setHandler replaces the handler", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, skew: 0 })
      const mock = yield* MockHttpClient
      expect(value(yield* provider.getAccessToken)).toBe("a")
      yield* TestClock.adjust("1 hour")
      expect(value(yield* provider.getAccessToken)).toBe("b")
      yield* TestClock.adjust("1 hour")
      expect(value(yield* provider.getAccessToken)).toBe("b")
      yield* mock.setHandler(() => MockHttpClient.json({ access_token: "c", expires_in: 3600 }))
      yield* TestClock.adjust("1 hour")
      expect(value(yield* provider.getAccessToken)).toBe("c")
      expect(yield* mock.requests).toHaveLength(4)
    }).pipe(
      Effect.provide(
        MockHttpClient.layer(
          MockHttpClient.script(
            MockHttpClient.json({ access_token: "a", expires_in: 3600 }),
            MockHttpClient.json({ access_token: "b", expires_in: 3600 })
          )
        )
      )
    )
  )
})
