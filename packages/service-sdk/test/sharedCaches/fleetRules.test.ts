/**
 * DESIGN §3–4 rules the fleet relies on, in one process with the mock HttpClient: shared outcomes, entries bound to
 * their client, `invalid_grant` never sent twice, short-lived tokens, and the degraded mode of a shared cache.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Logger, Option, Redacted, Ref, TestClock } from "effect"
import { ClientCredentials, TokenCache, TokenCacheError, TokenInfo, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import {
  AUTH_URL,
  authorizationCodeLayer,
  clientCredentialsLayer,
  credentials,
  expectTokenRequests,
  numberedTokens,
  oauthError,
  requestCount,
  requests,
  tokenInfo,
  tokenResponse,
  value
} from "../fixtures.js"

const getToken = Effect.flatMap(TokenProvider, (p) => p.getAccessToken)

/** A cache with a `withLock` (like Redis) whose backend can be switched off. */
const switchableCache = (initial?: TokenInfo) =>
  Effect.gen(function* () {
    const store = yield* Ref.make(Option.fromNullable(initial))
    const up = yield* Ref.make(true)
    const down = new TokenCacheError({ message: "Redis GET on redis://127.0.0.1:1 failed: connection refused" })
    const guard = <A>(effect: Effect.Effect<A>) =>
      Effect.flatMap(Ref.get(up), (isUp) => (isUp ? effect : Effect.fail(down)))
    const cache: TokenCache.TokenCache = {
      get: guard(Ref.get(store)),
      set: (token) => guard(Ref.set(store, Option.some(token))),
      withLock: (self) => Effect.zipRight(guard(Effect.void), self)
    }
    return { cache, store, up }
  })

const captureLogs = Effect.gen(function* () {
  const lines: Array<string> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  )
  return { lines, logger }
})

describe("shared outcomes", () => {
  it.effect("callers waiting on one renewal share its failure at once; the next call tries again", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 100 }, () => Effect.either(getToken)),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("2 seconds")
      const outcomes = yield* Fiber.join(fiber)
      expect(outcomes.every((outcome) => outcome._tag === "Left" && outcome.left._tag === "AuthenticationError")).toBe(
        true
      )
      yield* expectTokenRequests(1)
      const next = yield* Effect.fork(getToken)
      yield* TestClock.adjust("2 seconds")
      expect(value(yield* Fiber.join(next))).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(
      Effect.provide(
        clientCredentialsLayer((_request, call) =>
          Effect.delay(
            Effect.succeed(call === 0 ? oauthError(401, "invalid_client") : tokenResponse(`tok-${call + 1}`)),
            "1 second"
          )
        )
      )
    )
  )
})

describe("shared outcomes of forced refreshes", () => {
  it.effect("concurrent forceRefresh calls whose renewal fails share that failure: one request", () =>
    Effect.gen(function* () {
      const first = yield* Effect.fork(getToken)
      yield* TestClock.adjust("1 second")
      const rejected = yield* Fiber.join(first)
      const fiber = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 50 }, () =>
            Effect.either(Effect.flatMap(TokenProvider, (provider) => provider.forceRefresh(rejected)))
          ),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("2 seconds")
      const outcomes = yield* Fiber.join(fiber)
      expect(outcomes.filter((outcome) => outcome._tag === "Left").length).toBe(50)
      yield* expectTokenRequests(2)
    }).pipe(
      Effect.provide(
        clientCredentialsLayer((_request, call) =>
          Effect.delay(
            Effect.succeed(call === 0 ? tokenResponse("tok-1") : oauthError(401, "invalid_client")),
            "1 second"
          )
        )
      )
    )
  )
})

describe("entries are bound to their client", () => {
  it.effect("a provider writes client_id and auth_url; a token without them encodes as before", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* getToken.pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache })))
      const json = JSON.parse(TokenCache.encodeJson(Option.getOrThrow(yield* cache.get)))
      expect(json).toMatchObject({ access_token: "tok-1", client_id: credentials.clientId, auth_url: AUTH_URL })
      expect(typeof json.issued_at).toBe("number")
      expect(JSON.parse(TokenCache.encodeJson(tokenInfo("plain", 10)))).toEqual({
        access_token: "plain",
        expires_at: 10
      })
      const decoded = Option.getOrThrow(
        TokenCache.decodeJson(TokenCache.encodeJson(Option.getOrThrow(yield* cache.get)))
      )
      expect(decoded.clientId).toBe(credentials.clientId)
      expect(decoded.authUrl).toBe(AUTH_URL)
    })
  )

  it.effect("another client's, another server's or a narrower-scoped entry reads as none; an unbound one is used", () =>
    Effect.gen(function* () {
      const entry = (extra: Partial<ConstructorParameters<typeof TokenInfo>[0]>) =>
        new TokenInfo({ accessToken: Redacted.make("theirs"), expiresAt: 3600, ...extra })
      const served = (token: TokenInfo, scope?: string) =>
        Effect.gen(function* () {
          const cache = yield* TokenCache.memory(token)
          return yield* Effect.zip(getToken, requestCount).pipe(
            Effect.map(([token, count]) => [value(token), count] as const),
            Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache, scope }))
          )
        })
      expect(yield* served(entry({ clientId: "other-client" }))).toEqual(["tok-1", 1])
      expect(yield* served(entry({ clientId: credentials.clientId, authUrl: "http://127.0.0.1:9999" }))).toEqual([
        "tok-1",
        1
      ])
      expect(yield* served(entry({ scope: "a" }), "a b")).toEqual(["tok-1", 1])
      expect(
        yield* served(entry({ clientId: credentials.clientId, authUrl: AUTH_URL, scope: "b c a" }), "a,b")
      ).toEqual(["theirs", 0])
      expect(yield* served(entry({}), "a")).toEqual(["theirs", 0])
    })
  )

  it.scoped("two clients on one cache never get each other's token", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      const one = yield* ClientCredentialsOn(cache, "client-one", "scope-one")
      const two = yield* ClientCredentialsOn(cache, "client-two", "scope-two")
      for (let round = 0; round < 3; round++) {
        expect(value(yield* one.getAccessToken)).toMatch(/^client-one-/)
        expect(value(yield* two.getAccessToken)).toMatch(/^client-two-/)
        yield* TestClock.adjust("3600 seconds")
      }
    }).pipe(
      Effect.provide(
        MockHttpClient.layer((request, call) =>
          tokenResponse(
            `${request.headers.authorization === basic("client-one") ? "client-one" : "client-two"}-${call}`
          )
        )
      )
    )
  )
})

const basic = (clientId: string) => `Basic ${Buffer.from(`${clientId}:secret`).toString("base64")}`

const ClientCredentialsOn = (tokenCache: TokenCache.TokenCache, clientId: string, scope: string) =>
  ClientCredentials.make({ clientId, clientSecret: "secret", authUrl: AUTH_URL, scope, tokenCache })

describe("invalid_grant", () => {
  const stale = tokenInfo("old-access", 10, { refreshToken: "dead-refresh" })

  it.effect("the rejected refresh token is marked in the cache and never sent again, by any provider", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory(stale)
      const layer = authorizationCodeLayer(() => oauthError(400, "invalid_grant", "Invalid refresh token"), {
        tokenCache: cache
      })
      const first = yield* Effect.flip(getToken.pipe(Effect.provide(layer)))
      expect(first._tag).toBe("AuthenticationError")
      const entry = Option.getOrThrow(yield* cache.get)
      expect(entry.refreshRejected).toBe(true)
      expect(value(entry.refreshToken!)).toBe("dead-refresh")

      // the same provider, then a provider of "another process" on the same cache: no request at all
      const [again, other, count] = yield* Effect.all([
        Effect.flip(getToken),
        Effect.flip(getToken.pipe(Effect.provide(authorizationCodeLayer(numberedTokens(), { tokenCache: cache })))),
        requestCount
      ]).pipe(Effect.provide(layer))
      expect(again._tag).toBe("AuthenticationError")
      expect(other).toMatchObject({ _tag: "AuthenticationError", payload: { error: "invalid_grant" } })
      expect(count).toBe(0)
    })
  )

  it.effect("a new sign-in (a new entry) recovers; a different constructor refreshToken is tried once", () =>
    Effect.gen(function* () {
      const marked = new TokenInfo({ ...stale, refreshRejected: true })
      const cache = yield* TokenCache.memory(marked)
      yield* Effect.gen(function* () {
        expect((yield* Effect.flip(getToken))._tag).toBe("AuthenticationError")
        expect((yield* Effect.flip(getToken))._tag).toBe("AuthenticationError")
        const sent = (yield* requests).map((request) => request.form.get("refresh_token"))
        expect(sent).toEqual(["bootstrap"])
        yield* cache.set(tokenInfo("signed-in", 7200, { refreshToken: "fresh-refresh" }))
        expect(value(yield* getToken)).toBe("signed-in")
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(() => oauthError(400, "invalid_grant"), {
            tokenCache: cache,
            refreshToken: "bootstrap"
          })
        )
      )
    })
  )

  it.effect("a holder whose refresh token was rotated out by another process serves that process's token", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* switchableCache(stale)
      yield* Effect.gen(function* () {
        const token = yield* getToken
        expect(value(token)).toBe("renewed-elsewhere")
        yield* expectTokenRequests(1)
        expect(Option.getOrThrow(yield* Ref.get(store)).refreshRejected).toBeUndefined()
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(
            () =>
              // while our request was on its way, another process rotated the refresh token and stored its token
              Effect.as(
                Ref.set(store, Option.some(tokenInfo("renewed-elsewhere", 3600, { refreshToken: "rotated" }))),
                oauthError(400, "invalid_grant")
              ),
            { tokenCache: cache }
          )
        )
      )
    })
  )
})

describe("invalid_grant under a lock that was lost", () => {
  it.live("the winner's token, written 250 ms after our invalid_grant (a lock lost in a failover), is served", () =>
    Effect.gen(function* () {
      const nowSeconds = (yield* Clock.currentTimeMillis) / 1000
      const { cache, store } = yield* switchableCache(
        tokenInfo("old-access", nowSeconds - 10, { refreshToken: "dead-refresh" })
      )
      yield* Effect.gen(function* () {
        const token = yield* getToken
        expect(value(token)).toBe("renewed-elsewhere")
        yield* expectTokenRequests(1)
        expect(Option.getOrThrow(yield* Ref.get(store)).refreshRejected).toBeUndefined()
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(
            () =>
              // the other process rotated the refresh token under "its" lock and writes its token back a little later
              Effect.as(
                Effect.forkDaemon(
                  Effect.delay(
                    Ref.set(
                      store,
                      Option.some(tokenInfo("renewed-elsewhere", nowSeconds + 3600, { refreshToken: "rotated" }))
                    ),
                    "250 millis"
                  )
                ),
                oauthError(400, "invalid_grant")
              ),
            { tokenCache: cache }
          )
        )
      )
    })
  )
})

describe("a shared cache that cannot be reached", () => {
  it.effect("client credentials renew in this process, warn once per outage, and share again when it answers", () =>
    Effect.gen(function* () {
      const { cache, store, up } = yield* switchableCache()
      const { lines, logger } = yield* captureLogs
      yield* Effect.gen(function* () {
        yield* Ref.set(up, false)
        expect(value(yield* getToken)).toBe("tok-1")
        yield* TestClock.adjust("3600 seconds")
        expect(value(yield* getToken)).toBe("tok-2")
        expect(lines.filter((line) => line.startsWith("WARN")).length).toBe(1)
        expect(Option.isNone(yield* Ref.get(store))).toBe(true)
        yield* Ref.set(up, true)
        yield* TestClock.adjust("3600 seconds")
        expect(value(yield* getToken)).toBe("tok-3")
        expect(value(Option.getOrThrow(yield* Ref.get(store)).accessToken)).toBe("tok-3")
        yield* expectTokenRequests(3)
      }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache })), Effect.provide(logger))
    })
  )

  it.effect("authorization code fails with TokenCacheError and sends no refresh token", () =>
    Effect.gen(function* () {
      const { cache, up } = yield* switchableCache(tokenInfo("old", 10, { refreshToken: "shared-refresh" }))
      yield* Ref.set(up, false)
      const [error, count] = yield* Effect.zip(Effect.flip(getToken), requestCount).pipe(
        Effect.provide(authorizationCodeLayer(numberedTokens(), { tokenCache: cache }))
      )
      expect(error._tag).toBe("TokenCacheError")
      expect(count).toBe(0)
    })
  )
})

describe("short-lived tokens", () => {
  it.effect("a token of 10 s with the default skew: 100 concurrent and 20 sequential callers, one request", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* Effect.gen(function* () {
        yield* Effect.all(
          Array.from({ length: 100 }, () => getToken),
          { concurrency: "unbounded" }
        )
        for (let call = 0; call < 20; call++) yield* getToken
        yield* expectTokenRequests(1)
      }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens({ expires_in: 10 }), { tokenCache: cache })))
      // another provider on that cache knows the lifetime from the entry: no request either
      yield* Effect.gen(function* () {
        yield* TestClock.adjust("4 seconds")
        expect(value(yield* getToken)).toBe("tok-1")
        yield* expectTokenRequests(0)
      }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens({ expires_in: 10 }), { tokenCache: cache })))
    })
  )
})
