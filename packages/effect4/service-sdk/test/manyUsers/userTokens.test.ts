/** UserTokens (DESIGN section 3): a single flight per user, no user affected by another, bounded memory. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { TestClock } from "effect/testing"
import { TokenInfo, TokenStore, UserTokens } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, mock, requests } from "../support/mock.js"

const signedIn = (user: string) =>
  new TokenInfo({
    accessToken: Redacted.make(`${user}-at-0`),
    expiresAt: 10,
    refreshToken: Redacted.make(`${user}-rt`)
  })

/** The token endpoint answers each user's refresh with that user's new token; bob's refresh token is revoked. */
const server = mock((request) => {
  const refresh = request.form.get("refresh_token") ?? ""
  if (refresh.startsWith("bob")) return MockHttpClient.json({ error: "invalid_grant" }, 400)
  return MockHttpClient.json({
    access_token: `${refresh.split("-")[0]}-at-new`,
    token_type: "Bearer",
    expires_in: 3600
  })
})

describe("UserTokens", () => {
  it.effect("each user renews with their own refresh token; concurrent callers per user share one request", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const users = yield* UserTokens.make({ ...credentials, store })
      yield* users.signIn("ada", signedIn("ada"))
      yield* users.signIn("bob", signedIn("bob"))
      yield* TestClock.adjust("1 minute")
      const ada = yield* Effect.all(
        Array.from({ length: 10 }, () => users.provider("ada").getAccessToken),
        {
          concurrency: "unbounded"
        }
      )
      assert.isTrue(ada.every((token) => Redacted.value(token) === "ada-at-new"))
      // bob's rejected refresh token fails bob only
      const bob = yield* Effect.flip(users.provider("bob").getAccessToken)
      assert.strictEqual(bob._tag, "AuthenticationError")
      assert.strictEqual(Redacted.value(yield* users.provider("ada").getAccessToken), "ada-at-new")
      const sent = (yield* requests).map((r) => r.form.get("refresh_token"))
      assert.deepStrictEqual(sent.sort(), ["ada-rt", "bob-rt"])
    }).pipe(Effect.scoped, Effect.provide(server))
  )

  it.effect(
    "a renewal reads the user's entry once; an entry cleared since is 'not signed in' (no_token), no request",
    () =>
      Effect.gen(function* () {
        const memory = yield* TokenStore.memory()
        let reads = 0
        const store: TokenStore.TokenStore = (userId) => {
          const cache = memory(userId)
          return { ...cache, get: Effect.tap(cache.get, () => Effect.sync(() => reads++)) }
        }
        const users = yield* UserTokens.make({ ...credentials, store })
        yield* users.signIn("ada", signedIn("ada"))
        yield* users.signIn("cy", signedIn("cy"))
        assert.strictEqual(reads, 0)
        yield* TestClock.adjust("1 minute")
        yield* Effect.all(
          Array.from({ length: 5 }, () => users.provider("ada").getAccessToken),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(reads, 1)
        assert.strictEqual((yield* requests).length, 1)
        yield* memory("cy").clear!
        const error = yield* Effect.flip(users.provider("cy").getAccessToken)
        assert.match(error.message, /not signed in/)
        assert.strictEqual((error as { readonly payload?: { readonly error?: string } }).payload?.error, "no_token")
        assert.strictEqual(reads, 2)
        assert.strictEqual((yield* requests).length, 1)
      }).pipe(Effect.scoped, Effect.provide(server))
  )

  it.effect("signOut forgets the user's tokens in the store; the next call is 'not signed in' with no request", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const users = yield* UserTokens.make({ ...credentials, store })
      yield* users.signIn("ada", signedIn("ada"))
      yield* users.signOut("ada")
      assert.isTrue(Option.isNone(yield* store("ada").get))
      const error = yield* Effect.flip(users.provider("ada").getAccessToken)
      assert.match(error.message, /not signed in/)
      assert.strictEqual((yield* requests).length, 0)
    }).pipe(Effect.scoped, Effect.provide(server))
  )

  it.effect("a user's in-memory state is dropped after idleTimeToLive; the store still has the token", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const users = yield* UserTokens.make({ ...credentials, store, idleTimeToLive: "1 minute" })
      yield* users.signIn("ada", signedIn("ada"))
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual(Redacted.value(yield* users.provider("ada").getAccessToken), "ada-at-new")
      // another process writes the store: a live state serves its own fresh token without reading it...
      const external = new TokenInfo({ accessToken: Redacted.make("ada-external"), expiresAt: 7200 })
      yield* store("ada").set(external)
      assert.strictEqual(Redacted.value(yield* users.provider("ada").getAccessToken), "ada-at-new")
      // ...a state dropped after idleTimeToLive starts again from the store
      yield* TestClock.adjust("2 minutes")
      assert.strictEqual(Redacted.value(yield* users.provider("ada").getAccessToken), "ada-external")
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.scoped, Effect.provide(server))
  )

  it.effect("a non-string user id is a ConfigurationError", () =>
    Effect.gen(function* () {
      const users = yield* UserTokens.make({ ...credentials, store: yield* TokenStore.memory() })
      const error = yield* Effect.flip(users.provider(42 as unknown as string).getAccessToken)
      assert.strictEqual(error._tag as string, "ConfigurationError")
    }).pipe(Effect.scoped, Effect.provide(server))
  )
})
