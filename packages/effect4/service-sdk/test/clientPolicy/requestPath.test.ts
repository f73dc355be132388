/**
 * The request path's cheaper mechanisms (issue 31, as the Effect 3 line's) keep Effect's behaviour: the per-attempt
 * bound is `Effect.timeoutOrElse` on `TestClock` and a native timer on the live clock, with the same outcomes; spans
 * are made whenever a tracer is installed (with their attributes), and skipped only when nobody could see them; the
 * responses `client.http` hands out serve the bytes read within the attempt, on the request without the token.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as Tracer from "effect/Tracer"
import { ServiceClient } from "@service-sdk/effect"
import { MockHttpClient, type MockHandler } from "@service-sdk/effect/testing"
import { timeoutOrElse } from "../../src/internal/client/attemptTimeout.js"
import { apiClientLayer, apiRequests, apiServer } from "../support/mock.js"

class TimedOut {
  readonly _tag = "TimedOut"
}
const timedOut = () => Effect.fail(new TimedOut())

const recordingTracer = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { tracer, spans }
}

/** The API answers `api(apiCall)`. */
const server = (api: (apiCall: number) => ReturnType<MockHandler>) => apiServer((_bearer, call) => api(call))
const clientLayer = apiClientLayer

/** A request to an API that never answers, `settle` after it is sent: a TransportError after 2 attempts. */
const neverAnswered = (settle: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const client = yield* ServiceClient
    const fiber = yield* Effect.forkChild(Effect.flip(client.albums.get("a1")))
    yield* settle
    const error = yield* Fiber.join(fiber)
    assert.strictEqual(error._tag, "TransportError")
    assert.include(error.message, "did not answer")
    assert.strictEqual((yield* apiRequests).length, 2)
  })

describe("the per-attempt bound", () => {
  it.effect(
    "on TestClock it is Effect's own: nothing expires until the clock is moved, then exactly at the bound",
    () =>
      Effect.gen(function* () {
        const interrupted = yield* Ref.make(false)
        const attempt = Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
        const fiber = yield* Effect.forkChild(timeoutOrElse(attempt, Duration.seconds(10), timedOut))
        yield* TestClock.adjust("9999 millis")
        assert.isUndefined(fiber.pollUnsafe())
        yield* TestClock.adjust("1 millis")
        assert.instanceOf(yield* Effect.flip(Fiber.join(fiber)), TimedOut)
        assert.isTrue(yield* Ref.get(interrupted))
      })
  )

  it.effect("on TestClock a request that never answers fails with TransportError after each attempt's bound", () =>
    // 2 attempts (maxRetries 1), 5 s each, and the backoff between them
    neverAnswered(TestClock.adjust("1 minute")).pipe(
      Effect.provide(
        clientLayer(
          server(() => Effect.never),
          { timeout: "5 seconds", maxRetries: 1 }
        )
      )
    )
  )

  it.live("on the live clock: a late attempt is interrupted and fails with orElse; values and failures pass", () =>
    Effect.gen(function* () {
      const interrupted = yield* Ref.make(false)
      const attempt = Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
      const error = yield* Effect.flip(timeoutOrElse(attempt, Duration.millis(30), timedOut))
      assert.instanceOf(error, TimedOut)
      assert.isTrue(yield* Ref.get(interrupted))
      const late = Effect.as(Effect.sleep("10 millis"), "late but in time")
      assert.strictEqual(yield* timeoutOrElse(late, Duration.seconds(5), timedOut), "late but in time")
      assert.strictEqual(
        yield* Effect.flip(timeoutOrElse(Effect.fail("no" as const), Duration.seconds(5), timedOut)),
        "no"
      )
      assert.strictEqual(yield* timeoutOrElse(Effect.succeed(42), Duration.seconds(5), timedOut), 42)
      // a defect of the attempt stays a defect
      const died = yield* Effect.exit(timeoutOrElse(Effect.die("boom"), Duration.seconds(5), timedOut))
      assert.isTrue(Exit.isFailure(died) && !Exit.hasInterrupts(died))
    })
  )

  it.live("on the live clock: interrupting the caller interrupts the attempt", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Ref.make(false)
      const attempt = Effect.andThen(
        Deferred.succeed(started, undefined),
        Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
      )
      const caller = yield* Effect.forkChild(timeoutOrElse(attempt, Duration.seconds(30), timedOut))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(caller)
      assert.isTrue(yield* Ref.get(interrupted))
    })
  )

  it.live("on the live clock a request that never answers fails with TransportError, retried up to maxRetries", () =>
    neverAnswered(Effect.void).pipe(
      Effect.provide(
        clientLayer(
          server(() => Effect.never),
          { timeout: "50 millis", maxRetries: 1 }
        )
      )
    )
  )
})

describe("spans", () => {
  it.effect("with a tracer installed, a request has its ServiceClient.request and http.client spans", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recordingTracer()
      const client = yield* ServiceClient
      yield* Effect.withTracer(client.request("GET", "/albums/a1"), tracer)
      const request = spans.find((span) => span.name === "ServiceClient.request")
      assert.strictEqual(request?.attributes.get("http.request.method"), "GET")
      assert.strictEqual(request?.attributes.get("url.path"), "/albums/a1")
      // the SDK's own http.client span, as on the Effect 3 line; the platform's (named after the method, its Exit the
      // response with the request's Authorization header) is never made
      const http = spans.find((span) => span.kind === "client" && span.name === "http.client GET")
      assert.strictEqual(http?.attributes.get("http.response.status_code"), 200)
      assert.strictEqual(http?.attributes.get("url.path"), "/v1/albums/a1")
      assert.isFalse(spans.some((span) => span.name === "GET" || span.name === "POST"))
      assert.strictEqual(spans.filter((span) => span.name === "http.client GET").length, 1)
      // its Exit holds the status only
      assert.deepStrictEqual(
        http?.status._tag === "Ended" ? http.status.exit : undefined,
        Exit.succeed({ status: 200 })
      )
      // the http.client span is a child of the request's
      assert.deepStrictEqual(
        Option.map(http!.parent, (parent) => parent.spanId),
        Option.some(request!.spanId)
      )
      for (const span of spans) assert.notInclude(JSON.stringify([...span.attributes]), "token-1")
    }).pipe(Effect.provide(clientLayer(server(() => MockHttpClient.json({ id: "a1" })))))
  )

  it.effect("with tracing off, no span reaches the tracer (nor the platform's client span)", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recordingTracer()
      const client = yield* ServiceClient
      yield* client.request("GET", "/albums/a1").pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(false))
      assert.deepStrictEqual(
        spans.map((span) => span.name),
        []
      )
      assert.strictEqual((yield* apiRequests).length, 1)
    }).pipe(Effect.provide(clientLayer(server(() => MockHttpClient.json({ id: "a1" })))))
  )
})

describe("the responses client.http hands out", () => {
  const body = { name: "Café ☕", n: 1 }
  it.effect("serve the bytes read within the attempt: text, JSON, bytes, a stream, each as often as asked", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/albums/a1")
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers["x-answer"], "yes")
      assert.deepStrictEqual(yield* response.json, body)
      assert.strictEqual(yield* response.text, JSON.stringify(body))
      const bytes = new Uint8Array(yield* response.arrayBuffer)
      assert.strictEqual(new TextDecoder().decode(bytes), JSON.stringify(body))
      const streamed = yield* Stream.runCollect(response.stream)
      assert.strictEqual(
        streamed.reduce((sum, chunk) => sum + chunk.length, 0),
        bytes.length
      )
      // the request it holds is the one without the token
      assert.isUndefined(response.request.headers.authorization)
      assert.notInclude(JSON.stringify(response.request.headers), "token-1")
    }).pipe(Effect.provide(clientLayer(server(() => MockHttpClient.json(body, 200, { "x-answer": "yes" })))))
  )

  it.effect("a 204 has an empty body", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/me/player")
      assert.strictEqual(response.status, 204)
      assert.strictEqual(yield* response.text, "")
      assert.strictEqual((yield* response.arrayBuffer).byteLength, 0)
    }).pipe(Effect.provide(clientLayer(server(() => ({ status: 204 })))))
  )
})
