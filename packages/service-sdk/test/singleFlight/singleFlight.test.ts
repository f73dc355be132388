import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Redacted, Ref, TestClock } from "effect"
import { TokenCache, type TokenInfo, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import {
  awaitRequests,
  clientCredentialsLayer,
  expectTokenRequests,
  numberedTokens,
  requestCount,
  setHandler,
  tokenInfo,
  tokenResponse,
  value
} from "../fixtures.js"

const provider = TokenProvider
const getToken = Effect.flatMap(provider, (p) => p.getAccessToken)
const expired = tokenInfo("expired", 10)

/**
 * A cache shared "with another process": a `withLock` that records its use, and a hook that runs inside the lock
 * before `self` (to play the other process that renewed meanwhile).
 */
const lockingCache = (
  insideLock: (store: Ref.Ref<Option.Option<TokenInfo>>) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function* () {
    const store = yield* Ref.make(Option.some(expired))
    const events: Array<string> = []
    let held = false
    const cache: TokenCache.TokenCache = {
      get: Effect.sync(() => events.push(held ? "get (locked)" : "get")).pipe(Effect.zipRight(Ref.get(store))),
      set: (token) =>
        Effect.sync(() => events.push(held ? "set (locked)" : "set")).pipe(
          Effect.zipRight(Ref.set(store, Option.some(token)))
        ),
      withLock: (self) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            events.push("lock")
            held = true
          }),
          () => Effect.zipRight(insideLock(store), self),
          () =>
            Effect.sync(() => {
              held = false
              events.push("unlock")
            })
        )
    }
    return { cache, events, store }
  })

describe("single flight", () => {
  it.effect("1,000 concurrent callers on an expired token cause one request and share its token", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory(expired)
      yield* Effect.gen(function* () {
        const tokens = yield* Effect.all(
          Array.from({ length: 1000 }, () => getToken),
          { concurrency: "unbounded" }
        )
        expect(tokens).toHaveLength(1000)
        expect(new Set(tokens.map(value))).toEqual(new Set(["tok-1"]))
        yield* expectTokenRequests(1)
      }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache })))
      expect(value(Option.getOrThrow(yield* cache.get).accessToken)).toBe("tok-1")
    })
  )

  it.effect("1,000 concurrent callers on a slow token endpoint cause one request", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 1000 }, () => getToken),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("5 seconds")
      const tokens = yield* Fiber.join(fiber)
      expect(new Set(tokens.map(value))).toEqual(new Set(["tok-1"]))
      yield* expectTokenRequests(1)
    }).pipe(
      Effect.provide(
        clientCredentialsLayer((_request, call) =>
          Effect.delay(Effect.succeed(tokenResponse(`tok-${call + 1}`)), "2 seconds")
        )
      )
    )
  )

  it.effect("100 concurrent forceRefresh with the same rejected token cause one request", () =>
    Effect.gen(function* () {
      const first = yield* getToken
      const refreshed = yield* Effect.all(
        Array.from({ length: 100 }, () => Effect.flatMap(provider, (p) => p.forceRefresh(first))),
        { concurrency: "unbounded" }
      )
      expect(new Set(refreshed.map(value))).toEqual(new Set(["tok-2"]))
      yield* expectTokenRequests(2)
      expect(value(yield* getToken)).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("forceRefresh with a token that is no longer cached returns the cached one without a request", () =>
    Effect.gen(function* () {
      const first = yield* getToken
      const second = yield* Effect.flatMap(provider, (p) => p.forceRefresh(first))
      expect(value(second)).toBe("tok-2")
      const again = yield* Effect.flatMap(provider, (p) => p.forceRefresh(first))
      expect(value(again)).toBe("tok-2")
      const unknown = yield* Effect.flatMap(provider, (p) => p.forceRefresh(Redacted.make("never-issued")))
      expect(value(unknown)).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("forceRefresh sees a token another process put in the shared cache", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* Effect.gen(function* () {
        const first = yield* getToken
        yield* cache.set(tokenInfo("from-elsewhere", 3600))
        const refreshed = yield* Effect.flatMap(provider, (p) => p.forceRefresh(first))
        expect(value(refreshed)).toBe("from-elsewhere")
        yield* expectTokenRequests(1)
      }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache })))
    })
  )

  it.effect("a failure is not cached: the next call requests again", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(getToken)
      expect(failure._tag).toBe("AuthenticationError")
      yield* expectTokenRequests(1)
      expect(value(yield* getToken)).toBe("tok-ok")
      yield* expectTokenRequests(2)
      expect(value(yield* getToken)).toBe("tok-ok")
      yield* expectTokenRequests(2)
    }).pipe(
      Effect.provide(
        clientCredentialsLayer((_request, call) =>
          call === 0 ? MockHttpClient.json({ error: "invalid_client" }, 401) : tokenResponse("tok-ok")
        )
      )
    )
  )

  it.effect("an interrupted fetch releases the lock: the next caller goes on", () =>
    Effect.gen(function* () {
      yield* setHandler((_request, call) => (call === 0 ? Effect.never : tokenResponse("after-interrupt")))
      const hung = yield* Effect.fork(getToken)
      expect(yield* awaitRequests(1)).toBe(1)
      const waiter = yield* Effect.fork(getToken)
      yield* Fiber.interrupt(hung)
      const token = yield* Fiber.join(waiter)
      expect(value(token)).toBe("after-interrupt")
      yield* expectTokenRequests(2)
      expect(value(yield* getToken)).toBe("after-interrupt")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(clientCredentialsLayer(numberedTokens())))
  )

  it.effect("with a cache that has withLock, the renewal runs inside it and re-reads the cache there", () =>
    Effect.gen(function* () {
      const { cache, events } = yield* lockingCache()
      const token = yield* getToken.pipe(
        Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache }))
      )
      expect(value(token)).toBe("tok-1")
      expect(events).toEqual(["get", "lock", "get (locked)", "set (locked)", "unlock"])
    })
  )

  it.effect("a token another process stored while we waited for the lock is used without a request", () =>
    Effect.gen(function* () {
      const { cache, events } = yield* lockingCache((store) =>
        Ref.set(store, Option.some(tokenInfo("other-process", 3600)))
      )
      const [token, count] = yield* Effect.zip(getToken, requestCount).pipe(
        Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache }))
      )
      expect(value(token)).toBe("other-process")
      expect(count).toBe(0)
      expect(events).toEqual(["get", "lock", "get (locked)", "unlock"])
    })
  )

  it.effect("a fresh token in the shared cache is used without taking its lock", () =>
    Effect.gen(function* () {
      const { cache, events, store } = yield* lockingCache()
      yield* Ref.set(store, Option.some(tokenInfo("fresh", 3600)))
      const token = yield* getToken.pipe(
        Effect.provide(clientCredentialsLayer(numberedTokens(), { tokenCache: cache }))
      )
      expect(value(token)).toBe("fresh")
      expect(events).toEqual(["get"])
    })
  )

  it.effect("the withLock lock is released when the renewal fails", () =>
    Effect.gen(function* () {
      const { cache, events } = yield* lockingCache()
      const error = yield* Effect.flip(
        getToken.pipe(
          Effect.provide(
            clientCredentialsLayer(() => MockHttpClient.json({ error: "invalid_client" }, 401), { tokenCache: cache })
          )
        )
      )
      expect(error._tag).toBe("AuthenticationError")
      expect(events).toEqual(["get", "lock", "get (locked)", "unlock"])
    })
  )
})
