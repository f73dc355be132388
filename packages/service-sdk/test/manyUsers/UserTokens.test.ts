import { describe, expect, it } from "@effect/vitest"
import { Context, type Duration, Effect, Fiber, Layer, Logger, LogLevel, Option, Redacted, TestClock } from "effect"
import { AuthenticationError, type ConfigurationError, TokenCache, TokenStore, UserTokens } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, oauthError, tokenInfo, tokenResponse, value } from "../fixtures.js"

/** Answers a refresh after 1 s with `<refresh token>:access:<n>`, so every token names the user it was made for. */
const perUser: MockHandler = (request, call) =>
  Effect.as(Effect.sleep("1 second"), tokenResponse(`${request.form.get("refresh_token")}:access:${call + 1}`))

const setup = (
  handler: MockHandler,
  options: { readonly idleTimeToLive?: Duration.DurationInput; store?: TokenStore.TokenStore } = {}
) =>
  Effect.gen(function* () {
    const store = options.store ?? (yield* TokenStore.memory())
    const context = yield* Layer.build(
      UserTokens.layer({ ...credentials, store, idleTimeToLive: options.idleTimeToLive }).pipe(
        Layer.provideMerge(MockHttpClient.layer(handler))
      )
    )
    const mock = Context.get(context, MockHttpClient)
    return { store, users: Context.get(context, UserTokens), requests: Effect.map(mock.requests, (all) => all) }
  })

/** A signed-in user whose access token is already stale (so the first call refreshes). */
const staleUser = (userId: string) => tokenInfo(`${userId}-old`, 0, { refreshToken: `${userId}-refresh` })

const concurrently = <A, E>(effects: ReadonlyArray<Effect.Effect<A, E>>): Effect.Effect<Array<A>, E> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Effect.all(effects, { concurrency: "unbounded" }))
    yield* TestClock.adjust("2 seconds")
    return yield* Fiber.join(fiber)
  })

describe("UserTokens", () => {
  it.scoped("100 callers for one user cause 1 request; two users cause 2, and no token crosses users", () =>
    Effect.gen(function* () {
      const { requests, users } = yield* setup(perUser)
      yield* users.signIn("alice", staleUser("alice"))
      yield* users.signIn("bob", staleUser("bob"))
      const alice = yield* concurrently(Array.from({ length: 100 }, () => users.provider("alice").getAccessToken))
      expect((yield* requests).length).toBe(1)
      expect(new Set(alice.map(value))).toEqual(new Set(["alice-refresh:access:1"]))

      yield* TestClock.adjust("2 hours")
      const both = yield* concurrently(
        Array.from({ length: 200 }, (_, i) =>
          Effect.map(
            users.provider(i % 2 === 0 ? "alice" : "bob").getAccessToken,
            (token) => [i, value(token)] as const
          )
        )
      )
      const sent = yield* requests
      expect(sent.length).toBe(3)
      expect(
        sent
          .slice(1)
          .map((request) => request.form.get("refresh_token"))
          .sort()
      ).toEqual(["alice-refresh", "bob-refresh"])
      for (const [i, token] of both)
        expect(token.startsWith(i % 2 === 0 ? "alice-refresh:" : "bob-refresh:")).toBe(true)
    })
  )

  it.scoped("signIn serves the token without a request, bound to the client in the user's entry", () =>
    Effect.gen(function* () {
      const { requests, store, users } = yield* setup(perUser)
      yield* users.signIn("alice", tokenInfo("alice-fresh", 3600, { refreshToken: "alice-refresh" }))
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-fresh")
      expect((yield* requests).length).toBe(0)
      const entry = Option.getOrThrow(yield* store("alice").get)
      expect(entry.clientId).toBe(credentials.clientId)
      expect(entry.authUrl).toBe(credentials.authUrl)
    })
  )

  it.scoped("a user with no entry gets AuthenticationError 'not signed in' with no request", () =>
    Effect.gen(function* () {
      const { requests, users } = yield* setup(perUser)
      const error = yield* Effect.flip(users.provider("carol").getAccessToken)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(error.message).toContain("not signed in")
      expect((yield* requests).length).toBe(0)
    })
  )

  it.scoped("signOut clears the user's entry and memory; that user gets 'not signed in', others go on", () =>
    Effect.gen(function* () {
      const { requests, store, users } = yield* setup(perUser)
      yield* users.signIn("alice", tokenInfo("alice-fresh", 3600, { refreshToken: "alice-refresh" }))
      yield* users.signIn("bob", tokenInfo("bob-fresh", 3600, { refreshToken: "bob-refresh" }))
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-fresh")
      yield* users.signOut("alice")
      expect(Option.isNone(yield* store("alice").get)).toBe(true)
      const error = yield* Effect.flip(users.provider("alice").getAccessToken)
      expect(error.message).toContain("not signed in")
      expect(value(yield* users.provider("bob").getAccessToken)).toBe("bob-fresh")
      expect((yield* requests).length).toBe(0)
      // and signing in again works
      yield* users.signIn("alice", tokenInfo("alice-again", 3600, { refreshToken: "alice-refresh-2" }))
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-again")
    })
  )

  it.scoped(
    "a renewal reads the user's entry once; an entry cleared since is 'not signed in' (no_token), no request",
    () =>
      Effect.gen(function* () {
        const memory = yield* TokenStore.memory()
        let reads = 0
        const store: TokenStore.TokenStore = (userId) => {
          const cache = memory(userId)
          return { ...cache, get: Effect.tap(cache.get, () => Effect.sync(() => reads++)) }
        }
        const { requests, users } = yield* setup(perUser, { store })
        yield* users.signIn("alice", staleUser("alice"))
        yield* users.signIn("bob", staleUser("bob"))
        expect(reads).toBe(0)
        yield* concurrently(Array.from({ length: 5 }, () => users.provider("alice").getAccessToken))
        expect(reads).toBe(1)
        expect((yield* requests).length).toBe(1)
        yield* memory("bob").clear!
        const error = yield* Effect.flip(users.provider("bob").getAccessToken)
        expect(error.message).toContain("not signed in")
        expect((error as AuthenticationError).payload?.error).toBe("no_token")
        expect(reads).toBe(2)
        expect((yield* requests).length).toBe(1)
      })
  )

  it.scoped("an entry removed behind the state's back (another process's sign-out): no refresh, 'not signed in'", () =>
    Effect.gen(function* () {
      const { requests, store, users } = yield* setup(perUser)
      yield* users.signIn("alice", tokenInfo("alice-fresh", 100, { refreshToken: "alice-refresh" }))
      yield* users.signIn("bob", tokenInfo("bob-fresh", 100, { refreshToken: "bob-refresh" }))
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-fresh")
      yield* store("alice").clear!
      // alice's memo still serves her valid token; once it is stale her refresh token is not used again
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-fresh")
      yield* TestClock.adjust("2 minutes")
      const error = yield* Effect.flip(users.provider("alice").getAccessToken)
      expect(error._tag).toBe("AuthenticationError")
      expect(error.message).toContain("not signed in")
      expect(Option.isNone(yield* store("alice").get)).toBe(true)
      const bob = yield* concurrently([users.provider("bob").getAccessToken])
      expect(bob.map(value)).toEqual(["bob-refresh:access:1"])
      expect((yield* requests).map((request) => request.form.get("refresh_token"))).toEqual(["bob-refresh"])
    })
  )

  it.scoped("signOut with a store whose caches cannot clear is a TokenCacheError", () =>
    Effect.gen(function* () {
      const memory = yield* TokenStore.memory()
      const noClear: TokenStore.TokenStore = (userId) => {
        const { get, set } = memory(userId)
        return { get, set }
      }
      const { users } = yield* setup(perUser, { store: noClear })
      const error = yield* Effect.flip(users.signOut("alice"))
      expect(error._tag).toBe("TokenCacheError")
    })
  )

  it.scoped("a user's state is dropped after idleTimeToLive and rebuilt from the store on next use", () =>
    Effect.gen(function* () {
      const { requests, store, users } = yield* setup(perUser, { idleTimeToLive: "1 minute" })
      yield* users.signIn("alice", tokenInfo("alice-1", 3600, { refreshToken: "alice-refresh" }))
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-1")
      // another process writes a newer token for alice; while her state is in memory, its memo serves the first
      yield* store("alice").set(tokenInfo("alice-2", 1800, { refreshToken: "alice-refresh" }))
      yield* TestClock.adjust("30 seconds")
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-1")
      // each call starts the idle time again: 89 s after the first call, 59 s after the last, the state is there
      yield* TestClock.adjust("59 seconds")
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-1")
      yield* TestClock.adjust("61 seconds")
      expect(value(yield* users.provider("alice").getAccessToken)).toBe("alice-2")
      expect((yield* requests).length).toBe(0)
    })
  )

  it.scoped("one user's invalid_grant leaves the others alone, and is not sent again", () =>
    Effect.gen(function* () {
      const handler: MockHandler = (request, call) =>
        request.form.get("refresh_token") === "alice-refresh"
          ? oauthError(400, "invalid_grant", "revoked")
          : perUser(request, call)
      const { requests, users } = yield* setup(handler)
      yield* users.signIn("alice", staleUser("alice"))
      yield* users.signIn("bob", staleUser("bob"))
      const [alice, bob] = yield* concurrently<unknown, unknown>([
        Effect.flip(users.provider("alice").getAccessToken),
        Effect.orDie(users.provider("bob").getAccessToken)
      ])
      expect(alice).toBeInstanceOf(AuthenticationError)
      expect(value(bob as Redacted.Redacted<string>)).toMatch(/^bob-refresh:access:/)
      const again = yield* Effect.flip(users.provider("alice").getAccessToken)
      expect(again.message).toContain("invalid_grant")
      expect((yield* requests).filter((r) => r.form.get("refresh_token") === "alice-refresh").length).toBe(1)
    })
  )

  it.scoped("forceRefresh renews only that user's token", () =>
    Effect.gen(function* () {
      const { requests, users } = yield* setup(perUser)
      yield* users.signIn("alice", tokenInfo("alice-fresh", 3600, { refreshToken: "alice-refresh" }))
      yield* users.signIn("bob", tokenInfo("bob-fresh", 3600, { refreshToken: "bob-refresh" }))
      const [renewed] = yield* concurrently([users.provider("alice").forceRefresh(Redacted.make("alice-fresh"))])
      expect(value(renewed)).toBe("alice-refresh:access:1")
      expect(value(yield* users.provider("bob").getAccessToken)).toBe("bob-fresh")
      expect((yield* requests).map((r) => r.form.get("refresh_token"))).toEqual(["alice-refresh"])
    })
  )

  it.scoped("bad options and ids are ConfigurationErrors naming them", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      const bad = (options: Record<string, unknown>) =>
        Effect.flip(
          Layer.build(
            UserTokens.layer({ ...credentials, store, ...options } as never).pipe(
              Layer.provide(MockHttpClient.layer(perUser))
            )
          )
        )
      const ttl = yield* bad({ idleTimeToLive: -1 })
      expect(ttl._tag).toBe("ConfigurationError")
      expect(ttl.message).toContain("idleTimeToLive")
      const noStore = yield* bad({ store: undefined })
      expect(noStore.message).toContain("store")
      const { users } = yield* setup(perUser)
      // a bad id is a ConfigurationError in the error channel, never a throw (issue 20.6)
      for (const id of [42 as never, ""]) {
        const error = (yield* Effect.flip(users.provider(id).getAccessToken)) as unknown as ConfigurationError
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toMatch(/userId/)
        const forced = (yield* Effect.flip(
          users.provider(id).forceRefresh(Redacted.make("x"))
        )) as unknown as ConfigurationError
        expect(forced._tag).toBe("ConfigurationError")
        expect(((yield* Effect.flip(users.signOut(id))) as unknown as ConfigurationError)._tag).toBe(
          "ConfigurationError"
        )
      }
    })
  )

  it.scoped("canary: no token or refresh token in logs or errors", () =>
    Effect.gen(function* () {
      const texts: Array<string> = []
      const logger = Logger.make((options) => {
        texts.push(Logger.logfmtLogger.log(options))
      })
      const handler: MockHandler = (request) =>
        request.form.get("refresh_token") === "CANARY-refresh-alice"
          ? oauthError(400, "invalid_grant", "bad token CANARY-refresh-alice")
          : tokenResponse("CANARY-access-bob")
      const program = Effect.gen(function* () {
        const { users } = yield* setup(handler)
        yield* users.signIn("alice", tokenInfo("CANARY-old-alice", 0, { refreshToken: "CANARY-refresh-alice" }))
        yield* users.signIn("bob", tokenInfo("CANARY-old-bob", 0, { refreshToken: "CANARY-refresh-bob" }))
        const error = yield* Effect.flip(users.provider("alice").getAccessToken)
        texts.push(error.message, String(error), JSON.stringify(error))
        texts.push(String(yield* users.provider("bob").getAccessToken))
        yield* users.signOut("alice")
        const out = yield* Effect.flip(users.provider("alice").getAccessToken)
        texts.push(out.message, String(out), JSON.stringify(out))
      })
      yield* program.pipe(
        Logger.withMinimumLogLevel(LogLevel.All),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(texts.length).toBeGreaterThan(4)
      for (const text of texts) expect(text).not.toContain("CANARY")
    })
  )

  it.effect("TokenCache.memory has clear (a store may be built from it)", () =>
    Effect.map(TokenCache.memory(), (cache) => expect(cache.clear).toBeDefined())
  )
})
