/**
 * Fixtures of the ServiceClient tests: client layers on the mock `HttpClient`, a counting fake `TokenProvider`, a
 * handler that routes token-endpoint and API calls, and a runner that drives the `TestClock` until an effect ends.
 */
import { Cause, Duration, Effect, Exit, Fiber, Layer, Option, Redacted, Ref, TestClock } from "effect"
import { ServiceClient, type ServiceClientOptions, TokenProvider } from "@service-sdk/effect"
import {
  type MockHandler,
  MockHttpClient,
  type MockResponse,
  type RecordedRequest,
  TestTokenProvider
} from "@service-sdk/effect/testing"
import { AUTH_URL, credentials, requests, tokenResponse } from "./fixtures.js"

/** Only loopback addresses, even though the mock never connects. */
export const API_URL = "http://127.0.0.1:4020/v1"

export const expired = MockHttpClient.json({ error: { status: 401, message: "The access token expired" } }, 401)

export const ok = (body: unknown = { ok: true }, headers: Readonly<Record<string, string>> = {}) =>
  MockHttpClient.json(body, 200, headers)

export const status = (code: number, headers: Readonly<Record<string, string>> = {}): MockResponse =>
  MockHttpClient.json({ error: { status: code, message: `status ${code}` } }, code, headers)

/** A client on a fixed-token provider (or `provider`) over the mock. */
export const clientLayer = (
  handler: MockHandler,
  options: ServiceClientOptions = {},
  provider: Layer.Layer<TokenProvider> = TestTokenProvider.layer("tok-1")
) =>
  ServiceClient.layer({ apiUrl: API_URL, ...options }).pipe(
    Layer.provide(provider),
    Layer.provideMerge(MockHttpClient.layer(handler))
  )

/** A client on a real ClientCredentials provider over the same mock (the token endpoint lives at AUTH_URL). */
export const clientCredentialsClientLayer = (handler: MockHandler, options: ServiceClientOptions = {}) =>
  ServiceClient.layerClientCredentials({ ...credentials, apiUrl: API_URL, ...options }).pipe(
    Layer.provideMerge(MockHttpClient.layer(handler))
  )

const isTokenCall = (request: RecordedRequest) => request.url.href === `${AUTH_URL}/api/token`

/** Token-endpoint calls to `token` (default: `tok-1`, `tok-2`, …), data API calls to `api`; each counts its own calls. */
export const routed = (
  api: MockHandler,
  token: MockHandler = (_request, call) => tokenResponse(`tok-${call + 1}`)
): MockHandler => {
  let tokenCalls = 0
  let apiCalls = 0
  return (request) => (isTokenCall(request) ? token(request, tokenCalls++) : api(request, apiCalls++))
}

/** An API that answers 401 to `Bearer tok-1` (the first token) and `body` to anything else. */
export const rejectsFirstToken =
  (body: unknown = { ok: true }): MockHandler =>
  (request) =>
    request.headers.authorization === "Bearer tok-1" ? expired : ok(body)

export const apiRequests = Effect.map(requests, (all) => all.filter((request) => !isTokenCall(request)))
export const tokenRequests = Effect.map(requests, (all) => all.filter(isTokenCall))

export const authorizations = Effect.map(apiRequests, (all) => all.map((request) => request.headers.authorization))

/** A fake provider that counts: tokens `tok-1`, `tok-2`, …; `forceRefresh` moves to the next one. */
export const makeCountingProvider = Effect.gen(function* () {
  const generation = yield* Ref.make(1)
  const gets = yield* Ref.make(0)
  const rejected = yield* Ref.make<ReadonlyArray<string>>([])
  const current = Effect.map(Ref.get(generation), (n) => Redacted.make(`tok-${n}`))
  const service: TokenProvider.Service = {
    getAccessToken: Effect.zipRight(
      Ref.update(gets, (n) => n + 1),
      current
    ),
    forceRefresh: (token) =>
      Ref.update(rejected, (all) => [...all, Redacted.value(token)]).pipe(
        Effect.zipRight(Ref.update(generation, (n) => n + 1)),
        Effect.zipRight(current)
      )
  }
  return {
    layer: Layer.succeed(TokenProvider, service),
    gets: Ref.get(gets),
    rejected: Ref.get(rejected),
    setGeneration: (n: number) => Ref.set(generation, n)
  }
})

/**
 * Runs `effect` in a fiber and moves the `TestClock` by `step` until it ends (at most `steps` times), so backoff and
 * `Retry-After` waits pass without real time.
 */
export const settle = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  step: Duration.DurationInput = "500 millis",
  steps = 200
): Effect.Effect<Exit.Exit<A, E>, never, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < steps; i++) {
      yield* Effect.yieldNow()
      if (Option.isSome(yield* Fiber.poll(fiber))) break
      yield* TestClock.adjust(Duration.decode(step))
    }
    return yield* Fiber.await(fiber)
  })

/** The failure of an exit (throws if it succeeded or died). */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

export const valueOf = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isFailure(exit)) throw new Error(`expected a success, got ${Cause.pretty(exit.cause)}`)
  return exit.value
}
