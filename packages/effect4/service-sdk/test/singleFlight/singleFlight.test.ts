/** Single flight (DESIGN section 4): many callers, one token request, shared outcomes, exact counts under TestClock. */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { ClientCredentials, AuthorizationCode, TokenCache, TokenInfo } from "@service-sdk/effect"
import { MockHttpClient, type MockResponse } from "@service-sdk/effect/testing"
import { credentials, issuing, mock, requests } from "../support/mock.js"

describe("single flight", () => {
  it.effect("100 concurrent callers on an empty cache cause exactly one token request", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make(credentials)
      const fibers = yield* Effect.forEach(Array.from({ length: 100 }), () => Effect.forkChild(provider.getAccessToken))
      yield* TestClock.adjust("1 second")
      const tokens = yield* Effect.forEach(fibers, (fiber) => Fiber.join(fiber))
      assert.strictEqual((yield* requests).length, 1)
      assert.isTrue(tokens.every((token) => Redacted.value(token) === "token-1"))
    }).pipe(
      Effect.provide(mock((r, call) => Effect.delay(Effect.succeed(issuing()(r, call) as MockResponse), "100 millis")))
    )
  )

  it.effect("a cached token is served until expiresAt - skew, then renewed once", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, skew: "30 seconds" })
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      yield* TestClock.adjust("3569 seconds")
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      assert.strictEqual((yield* requests).length, 1)
      yield* TestClock.adjust("1 second")
      const renewed = yield* Effect.all(
        Array.from({ length: 20 }, () => provider.getAccessToken),
        {
          concurrency: "unbounded"
        }
      )
      assert.isTrue(renewed.every((token) => Redacted.value(token) === "token-2"))
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("short-lived tokens (lifetime <= 2 × skew) are renewed at half their lifetime, not on every call", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, skew: "30 seconds" })
      yield* provider.getAccessToken
      yield* TestClock.adjust("29 seconds")
      yield* provider.getAccessToken
      assert.strictEqual((yield* requests).length, 1)
      yield* TestClock.adjust("1 second")
      yield* provider.getAccessToken
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(Effect.provide(mock(issuing({}, 60))))
  )

  it.effect("waiters share a failed renewal's error at once; the next call tries again", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...credentials, maxRetries: 0 })
      const fibers = yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.forkChild(provider.getAccessToken))
      yield* TestClock.adjust("1 second")
      const exits = yield* Effect.forEach(fibers, (fiber) => Fiber.await(fiber))
      assert.isTrue(exits.every((exit) => exit._tag === "Failure"))
      assert.strictEqual((yield* requests).length, 1)
      const mockClient = yield* MockHttpClient
      yield* mockClient.setHandler(issuing())
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-2")
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(
      Effect.provide(
        mock(() => Effect.delay(Effect.succeed(MockHttpClient.json({ error: "invalid_client" }, 401)), "500 millis"))
      )
    )
  )

  it.effect("an interrupted renewal lets a waiter renew; nothing is cached from it", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make(credentials)
      const first = yield* Effect.forkChild(provider.getAccessToken)
      yield* TestClock.adjust("100 millis")
      const second = yield* Effect.forkChild(provider.getAccessToken)
      yield* TestClock.adjust("100 millis")
      yield* Fiber.interrupt(first)
      yield* TestClock.adjust("2 seconds")
      const token = yield* Fiber.join(second)
      assert.strictEqual(Redacted.value(token), "token-2")
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(
      Effect.provide(mock((r, call) => Effect.delay(Effect.succeed(issuing()(r, call) as MockResponse), "1 second")))
    )
  )

  it.effect("forceRefresh(rejected) returns a newer cached token without a request", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make(credentials)
      const first = yield* provider.getAccessToken
      const fresh = yield* provider.forceRefresh(first)
      assert.strictEqual(Redacted.value(fresh), "token-2")
      // a second 401 on the old token: the cache already holds another one
      const again = yield* provider.forceRefresh(first)
      assert.strictEqual(Redacted.value(again), "token-2")
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("concurrent forceRefresh calls for one rejected token make one request", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make(credentials)
      const first = yield* provider.getAccessToken
      const refreshed = yield* Effect.all(
        Array.from({ length: 25 }, () => provider.forceRefresh(first)),
        {
          concurrency: "unbounded"
        }
      )
      assert.isTrue(refreshed.every((token) => Redacted.value(token) === "token-2"))
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect("entries bound to another client_id read as none", () =>
    Effect.gen(function* () {
      const other = new TokenInfo({
        accessToken: Redacted.make("someone-elses"),
        expiresAt: 10_000,
        clientId: "another-client"
      })
      const cache = yield* TokenCache.memory(other)
      const provider = yield* ClientCredentials.make({ ...credentials, tokenCache: cache })
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-1")
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(mock(issuing())))
  )
})

describe("invalid_grant memory", () => {
  const signedIn = new TokenInfo({
    accessToken: Redacted.make("at-0"),
    expiresAt: 10,
    refreshToken: Redacted.make("rt-0")
  })

  it.effect("an invalid_grant refresh token is never sent again: callers fail at once with no request", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory(signedIn)
      const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: cache })
      const first = yield* Effect.flip(provider.getAccessToken)
      assert.strictEqual(first._tag, "AuthenticationError")
      const second = yield* Effect.flip(provider.getAccessToken)
      assert.strictEqual(second._tag, "AuthenticationError")
      assert.match(second.message, /sign in again/)
      assert.strictEqual((yield* requests).length, 1)
      // the mark is in the entry (fleet-wide), and the refresh token is kept
      const entry = yield* cache.get
      assert.strictEqual(entry._tag === "Some" && entry.value.refreshRejected, true)
      assert.strictEqual(entry._tag === "Some" && Redacted.value(entry.value.refreshToken!), "rt-0")
    }).pipe(
      Effect.provide(mock(() => MockHttpClient.json({ error: "invalid_grant", error_description: "revoked" }, 400)))
    )
  )

  it.live(
    "the token of a renewal elsewhere, written 250 ms after our invalid_grant (a lock lost in a failover), is served",
    () =>
      Effect.gen(function* () {
        const now = (yield* Clock.currentTimeMillis) / 1000
        const cache = yield* TokenCache.memory(
          new TokenInfo({
            accessToken: Redacted.make("at-0"),
            expiresAt: now - 10,
            refreshToken: Redacted.make("rt-0")
          })
        )
        const winner = new TokenInfo({
          accessToken: Redacted.make("renewed-elsewhere"),
          expiresAt: now + 3600,
          refreshToken: Redacted.make("rt-rotated")
        })
        const mockClient = yield* MockHttpClient
        // the other process rotated the refresh token under "its" lock and writes its token back a little later
        yield* mockClient.setHandler(() => {
          setTimeout(() => Effect.runFork(cache.set(winner)), 250)
          return MockHttpClient.json({ error: "invalid_grant" }, 400)
        })
        const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: cache })
        assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "renewed-elsewhere")
        assert.strictEqual((yield* requests).length, 1)
        const entry = yield* cache.get
        assert.strictEqual(entry._tag === "Some" && entry.value.refreshRejected, undefined)
      }).pipe(Effect.provide(mock(() => MockHttpClient.json({ error: "invalid_grant" }, 400))))
  )

  it.effect("an empty 400 (no error code) counts as invalid_grant", () =>
    Effect.gen(function* () {
      const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: yield* TokenCache.memory(signedIn) })
      yield* Effect.flip(provider.getAccessToken)
      yield* Effect.flip(provider.getAccessToken)
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(mock(() => ({ status: 400 }))))
  )

  it.effect("a new sign-in (another refresh token in the cache) lifts it", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory(signedIn)
      const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: cache })
      yield* Effect.flip(provider.getAccessToken)
      yield* cache.set(
        new TokenInfo({ accessToken: Redacted.make("x"), expiresAt: 0, refreshToken: Redacted.make("rt-new") })
      )
      const mockClient = yield* MockHttpClient
      yield* mockClient.setHandler(issuing())
      assert.strictEqual(Redacted.value(yield* provider.getAccessToken), "token-2")
      const all = yield* requests
      assert.strictEqual(all[1]!.form.get("refresh_token"), "rt-new")
    }).pipe(Effect.provide(mock(() => MockHttpClient.json({ error: "invalid_grant" }, 400))))
  )
})
