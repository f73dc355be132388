/**
 * `refreshAhead` (DESIGN §3): within that long of going stale, the first caller starts a background renewal (single
 * flight, in the provider's scope) and is served the still-valid token; a failure is logged and the normal path
 * renews at staleness. Token lifetime 3600 s, skew 30 s, refreshAhead 60 s: stale at 3570 s, ahead from 3510 s.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Exit, Fiber, Layer, Logger, Option, Ref, TestClock } from "effect"
import { ClientCredentials, ConfigurationError, TokenProvider } from "@service-sdk/effect"
import { AsyncClientCredentials } from "@service-sdk/effect/promise"
import { type MockHandler, MockHttpClient, type MockResponse } from "@service-sdk/effect/testing"
import { awaitRequests, credentials, expectTokenRequests, setHandler, tokenResponse, value } from "../fixtures.js"

const AHEAD = { skew: "30 seconds", refreshAhead: "60 seconds" } as const

/** tok-1 at once; later token requests answer after `delay` (under TestClock: only when the test moves time). */
const delayedAfterFirst =
  (delay: Duration.DurationInput) =>
  (_request: unknown, call: number): MockResponse | Effect.Effect<MockResponse> =>
    call === 0 ? tokenResponse("tok-1") : Effect.delay(Effect.succeed(tokenResponse(`tok-${call + 1}`)), delay)

const provider = (handler: MockHandler, options: ClientCredentials.Options = AHEAD) =>
  ClientCredentials.layer({ ...credentials, ...options }).pipe(Layer.provideMerge(MockHttpClient.layer(handler)))

const token = Effect.flatMap(TokenProvider, (tokens) => Effect.map(tokens.getAccessToken, value))

describe("refreshAhead", () => {
  it.effect("within refreshAhead of staleness: callers are served at once while one background renewal runs", () =>
    Effect.gen(function* () {
      expect(yield* token).toBe("tok-1")
      yield* TestClock.adjust("3500 seconds")
      expect(yield* token).toBe("tok-1")
      yield* expectTokenRequests(1)
      yield* TestClock.adjust("11 seconds") // 3511 s: inside the window
      // many callers, none waits for the renewal (its answer is 5 s away on the TestClock)
      const callers = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 50 }, () => token),
          { concurrency: 50 }
        )
      )
      const served = yield* Fiber.join(callers)
      expect(new Set(served)).toEqual(new Set(["tok-1"]))
      yield* expectTokenRequests(2)
      yield* TestClock.adjust("5 seconds")
      expect(yield* token).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(provider(delayedAfterFirst("5 seconds"))))
  )

  it.effect("a caller that finds the token stale while the background renewal runs joins it", () =>
    Effect.gen(function* () {
      expect(yield* token).toBe("tok-1")
      yield* TestClock.adjust("3565 seconds") // 5 s before staleness
      expect(yield* token).toBe("tok-1")
      yield* TestClock.adjust("6 seconds") // stale now; the renewal answers 14 s later
      const late = yield* Effect.fork(token)
      yield* TestClock.adjust("14 seconds")
      expect(yield* Fiber.join(late)).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(provider(delayedAfterFirst("20 seconds"))))
  )

  it.effect(
    "a failed background renewal is logged, not retried per call, and the normal path renews at staleness",
    () =>
      Effect.gen(function* () {
        const logs = yield* Ref.make<ReadonlyArray<string>>([])
        const logger = Logger.make(({ logLevel, message }) => {
          Effect.runSync(Ref.update(logs, (all) => [...all, `${logLevel.label}: ${String(message)}`]))
        })
        yield* Effect.gen(function* () {
          expect(yield* token).toBe("tok-1")
          yield* setHandler(() => MockHttpClient.json({ error: "server_error" }, 500))
          yield* TestClock.adjust("3520 seconds")
          expect(yield* token).toBe("tok-1")
          // let the background renewal fail (no retries: maxRetries 0)
          yield* TestClock.adjust("1 second")
          for (let i = 0; i < 10; i++) expect(yield* token).toBe("tok-1")
          yield* expectTokenRequests(2)
          const warnings = (yield* Ref.get(logs)).filter((line) => line.startsWith("WARN"))
          expect(warnings.some((line) => line.includes("renewal ahead of expiry failed"))).toBe(true)
          yield* setHandler(() => tokenResponse("tok-3"))
          yield* TestClock.adjust("60 seconds") // stale
          expect(yield* token).toBe("tok-3")
          yield* expectTokenRequests(3)
        }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      }).pipe(Effect.provide(provider(() => tokenResponse("tok-1"), { ...AHEAD, maxRetries: 0 })))
  )

  it.effect("closing the provider's scope interrupts the background renewal", () =>
    Effect.gen(function* () {
      const interrupted = yield* Ref.make(false)
      const hanging = Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
      const handler = (_request: unknown, call: number) => (call === 0 ? tokenResponse("tok-1") : hanging)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(provider(handler))
          const tokens = yield* Effect.provide(TokenProvider, context)
          expect(value(yield* tokens.getAccessToken)).toBe("tok-1")
          yield* TestClock.adjust("3520 seconds")
          expect(value(yield* tokens.getAccessToken)).toBe("tok-1")
          expect(yield* Effect.provide(awaitRequests(2), context)).toBe(2)
          expect(yield* Ref.get(interrupted)).toBe(false)
        })
      )
      expect(yield* Ref.get(interrupted)).toBe(true)
    })
  )

  it.effect("off by default: a token is renewed only when stale, by the caller", () =>
    Effect.gen(function* () {
      expect(yield* token).toBe("tok-1")
      yield* TestClock.adjust("3565 seconds")
      expect(yield* token).toBe("tok-1")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(provider(delayedAfterFirst("1 second"), { skew: "30 seconds" })))
  )

  it.scoped("bad values are a ConfigurationError naming refreshAhead", () =>
    Effect.gen(function* () {
      for (const refreshAhead of [-1, 0, Number.NaN, "soon", Number.POSITIVE_INFINITY] as const) {
        const exit = yield* Effect.exit(
          ClientCredentials.make({ ...credentials, refreshAhead: refreshAhead as never }).pipe(
            Effect.provide(MockHttpClient.layer(() => tokenResponse("x")))
          )
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Exit.causeOption(exit)) : undefined
        const failure = error === undefined ? undefined : Effect.runSync(Effect.flip(Effect.failCause(error)))
        expect(failure).toBeInstanceOf(ConfigurationError)
        expect((failure as ConfigurationError).message).toContain("refreshAhead")
      }
    })
  )
})

describe("refreshAhead in the Promise facade", () => {
  it("the synchronous cached path leaves the window to getAccessToken, which starts the renewal; nobody waits", async () => {
    let calls = 0
    const handler: MockHandler = () => {
      calls++
      // tok-1 lives 3 s (stale at 2 s with skew 1 s; ahead from 0.5 s); the renewal answers after 300 ms
      return calls === 1
        ? tokenResponse("tok-1", { expires_in: 3 })
        : Effect.delay(Effect.succeed(tokenResponse(`tok-${calls}`)), "300 millis")
    }
    await using auth = new AsyncClientCredentials({
      ...credentials,
      skew: "1 second",
      refreshAhead: "1500 millis",
      httpClient: MockHttpClient.layer(handler)
    })
    expect(await auth.getAccessToken()).toBe("tok-1")
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(await auth.getAccessToken()).toBe("tok-1")
    expect(await auth.getAccessToken()).toBe("tok-1")
    // tok-1, not tok-2: these callers were not made to wait for the renewal they started
    expect(calls).toBe(2)
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(await auth.getAccessToken()).toBe("tok-2")
    expect(calls).toBe(2)
  })
})
