/**
 * `RedisTokenStore`: one key per user over one connection, the fleet's single flight per user, sign-out, and user ids
 * that can neither reach another user's key nor a lock key.
 */
import { randomUUID } from "node:crypto"
import { expect, it } from "@effect/vitest"
import { RedisTokenStore } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AuthenticationError, ConfigurationError, TokenInfo, UserTokens } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { describeRedis } from "../../../redis/test/support/redisServer.js"

const credentials = { clientId: "store-client", clientSecret: "store-secret", authUrl: "http://127.0.0.1:9" }
const USERS = ["alice", "bob", "a:lock", "ü/../x", "."]

const staleToken = (userId: string) =>
  new TokenInfo({
    accessToken: Redacted.make(`${encodeURIComponent(userId)}-old`),
    refreshToken: Redacted.make(`${encodeURIComponent(userId)}-refresh`),
    expiresAt: 0
  })

it.prop(
  "encoded user ids: distinct ids get distinct keys, none with ':' or '/'",
  [Schema.String, Schema.String],
  ([a, b]) => {
    const [ka, kb] = [RedisTokenStore.userKey("p:", a), RedisTokenStore.userKey("p:", b)]
    expect(ka.slice(2)).not.toMatch(/[:/]/)
    expect(ka === kb).toBe(a === b)
    expect(ka).not.toBe(`${kb}:lock`)
  }
)

it.effect("the keys are the Effect 3 line's: a user id is encoded the same way", () =>
  Effect.sync(() => {
    expect(RedisTokenStore.userKey("app:", "ü/../x")).toBe("app:%00fc%002f..%002fx")
    expect(RedisTokenStore.userKey("app:", "a:lock")).toBe("app:a%003alock")
    expect(RedisTokenStore.userKey("app:", "user@example.com")).toBe("app:user@example.com")
  })
)

it.effect("a missing prefix is a ConfigurationError", () =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(Effect.scoped(RedisTokenStore.make({ prefix: "" })))
    expect(error).toBeInstanceOf(ConfigurationError)
    expect(error.message).toContain("prefix")
  })
)

describeRedis("RedisTokenStore (Effect 4)", (server) => {
  it.live(
    "two processes' UserTokens over one store: one token request per user, each user's own token, sign-out clears the key",
    () =>
      Effect.gen(function* () {
        const prefix = `test4:users:${randomUUID()}:`
        const instances = yield* Effect.forEach([1, 2], () =>
          Effect.flatMap(RedisTokenStore.make({ url: server().url, prefix, lockTtl: "300 millis" }), (store) =>
            UserTokens.make({ ...credentials, store })
          )
        )
        yield* Effect.forEach(USERS, (user) => instances[0]!.signIn(user, staleToken(user)))
        const calls = USERS.flatMap((user) =>
          instances.flatMap((users) =>
            Array.from({ length: 10 }, () =>
              Effect.map(users.provider(user).getAccessToken, (token) => [user, Redacted.value(token)] as const)
            )
          )
        )
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        for (const [user, token] of results) expect(token).toBe(`${encodeURIComponent(user)}-refresh:renewed`)
        const mock = yield* MockHttpClient
        const refreshed = (yield* mock.requests).map((request) => request.form.get("refresh_token"))
        expect(refreshed.sort()).toEqual(USERS.map((user) => `${encodeURIComponent(user)}-refresh`).sort())

        const admin = server().admin
        const key = RedisTokenStore.userKey(prefix, "alice")
        expect(yield* Effect.promise(() => admin.exists(key))).toBe(1)
        yield* instances[1]!.signOut("alice")
        expect(yield* Effect.promise(() => admin.exists(key))).toBe(0)
        const here = yield* Effect.flip(instances[1]!.provider("alice").getAccessToken)
        expect(here).toBeInstanceOf(AuthenticationError)
        // in another process: at its next renewal (here forced), without a token request, and the entry stays gone
        const served = yield* instances[0]!.provider("alice").getAccessToken
        const there = yield* Effect.flip(instances[0]!.provider("alice").forceRefresh(served))
        expect(there).toBeInstanceOf(AuthenticationError)
        expect((yield* mock.requests).length).toBe(USERS.length)
        expect(yield* Effect.promise(() => admin.exists(key))).toBe(0)
        expect(Redacted.value(yield* instances[0]!.provider("bob").getAccessToken)).toBe("bob-refresh:renewed")
      }).pipe(
        Effect.provide(
          MockHttpClient.layer((request) =>
            Effect.as(
              Effect.sleep("100 millis"),
              MockHttpClient.json({
                access_token: `${request.form.get("refresh_token")}:renewed`,
                token_type: "Bearer",
                expires_in: 3600
              })
            )
          )
        )
      ),
    20_000
  )

  it.live(
    "connect (plain code): a store with close(); Redis unreachable rejects with TokenCacheError naming no secret",
    () =>
      Effect.promise(async () => {
        const prefix = `test4:users:${randomUUID()}:`
        const store = await RedisTokenStore.connect({ url: server().url, prefix })
        await Effect.runPromise(store("carol").set(staleToken("carol")))
        expect(await server().admin.exists(RedisTokenStore.userKey(prefix, "carol"))).toBe(1)
        await store.close()
        const closed = await Effect.runPromise(Effect.flip(store("carol").get))
        expect(closed._tag).toBe("TokenCacheError")

        const error = await RedisTokenStore.connect({
          url: "redis://:hunter2-secret@127.0.0.1:1",
          prefix: "p:",
          commandTimeout: "500 millis"
        }).catch((e: unknown) => e)
        expect((error as { _tag?: string })._tag).toBe("TokenCacheError")
        expect(String((error as Error).message)).not.toContain("hunter2-secret")
      })
  )
})
