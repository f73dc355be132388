/**
 * The request path's cheaper mechanisms (issue 31) keep Effect's behaviour: the per-attempt bound is
 * `Effect.timeoutFail` on `TestClock` and a native timer on the live clock, with the same outcomes; spans are made
 * whenever a tracer is installed (with their attributes), and skipped only when nobody could see them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Duration, Effect, Exit, Fiber, Option, Ref, Stream, TestClock, Tracer } from "effect"
import * as HttpClient from "@effect/platform/HttpClient"
import { ServiceClient } from "@service-sdk/effect"
import { timeoutFail } from "../../src/internal/client/attemptTimeout.js"
import { traces } from "../../src/internal/liveServices.js"
import {
  API_URL,
  apiRequests,
  clientCredentialsClientLayer,
  clientLayer,
  ok,
  rejectsFirstToken,
  routed,
  tokenRequests
} from "../ServiceClient.helpers.js"

/** Whether spans made here would reach anyone. */
const tracing = Effect.withFiberRuntime((fiber) => Effect.succeed(traces(fiber)))

class TimedOut {
  readonly _tag = "TimedOut"
}

const recordingTracer = Effect.map(Effect.tracer, (base) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = base.span(name, parent, context, links, startTime, kind, options)
      spans.push(span)
      return span
    },
    context: base.context
  })
  return { tracer, spans }
})

describe("the per-attempt bound", () => {
  it.effect(
    "on TestClock it is Effect's own: nothing expires until the clock is moved, then exactly at the bound",
    () =>
      Effect.gen(function* () {
        const interrupted = yield* Ref.make(false)
        const attempt = Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
        const fiber = yield* Effect.fork(timeoutFail(attempt, Duration.seconds(10), () => new TimedOut()))
        yield* TestClock.adjust("9999 millis")
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
        yield* TestClock.adjust("1 millis")
        expect(yield* Effect.flip(Fiber.join(fiber))).toBeInstanceOf(TimedOut)
        expect(yield* Ref.get(interrupted)).toBe(true)
      })
  )

  it.effect("on TestClock a value or a failure within the bound comes back as is", () =>
    Effect.gen(function* () {
      const value = yield* timeoutFail(Effect.succeed(42), Duration.seconds(1), () => new TimedOut())
      expect(value).toBe(42)
      const error = yield* Effect.flip(
        timeoutFail(Effect.fail("no" as const), Duration.seconds(1), () => new TimedOut())
      )
      expect(error).toBe("no")
    })
  )

  it.live("on the live clock: a late attempt is interrupted and fails with onTimeout; values and failures pass", () =>
    Effect.gen(function* () {
      const interrupted = yield* Ref.make(false)
      const attempt = Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
      const error = yield* Effect.flip(timeoutFail(attempt, Duration.millis(30), () => new TimedOut()))
      expect(error).toBeInstanceOf(TimedOut)
      expect(yield* Ref.get(interrupted)).toBe(true)
      const late = Effect.as(Effect.sleep("10 millis"), "late but in time")
      expect(yield* timeoutFail(late, Duration.seconds(5), () => new TimedOut())).toBe("late but in time")
      expect(
        yield* Effect.flip(timeoutFail(Effect.fail("no" as const), Duration.seconds(5), () => new TimedOut()))
      ).toBe("no")
      // a defect of the attempt stays a defect
      const died = yield* Effect.exit(timeoutFail(Effect.die("boom"), Duration.seconds(5), () => new TimedOut()))
      expect(Exit.isFailure(died) && !Exit.isInterrupted(died)).toBe(true)
    })
  )

  it.live("on the live clock: interrupting the caller interrupts the attempt", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Ref.make(false)
      const attempt = Effect.zipRight(
        Deferred.succeed(started, undefined),
        Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
      )
      const caller = yield* Effect.fork(timeoutFail(attempt, Duration.seconds(30), () => new TimedOut()))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(caller)
      expect(yield* Ref.get(interrupted)).toBe(true)
    })
  )
})

describe("spans", () => {
  it.effect("none is made when no tracer is installed; with one, or with tracing off, as Effect says", () =>
    Effect.gen(function* () {
      expect(yield* tracing).toBe(false)
      const { tracer } = yield* recordingTracer
      expect(yield* Effect.withTracer(tracing, tracer)).toBe(true)
      expect(yield* tracing.pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(false))).toBe(false)
    })
  )

  it.effect(
    "with a tracer installed, a request has its ServiceClient.request and http.client spans and attributes",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recordingTracer
        const client = yield* ServiceClient
        yield* Effect.withTracer(client.request("GET", "/albums/a1"), tracer)
        const request = spans.find((span) => span.name === "ServiceClient.request")
        expect(request?.attributes.get("http.request.method")).toBe("GET")
        expect(request?.attributes.get("url.path")).toBe("/albums/a1")
        const http = spans.find((span) => span.name === "http.client GET")
        expect(http?.attributes.get("url.path")).toBe("/v1/albums/a1")
        expect(http?.attributes.get("http.response.status_code")).toBe(200)
        expect(http?.attributes.get("http.request.header.authorization")).not.toContain("tok-1")
        // the http.client span is a child of the request's
        expect(Option.map(http!.parent, (parent) => parent.spanId)).toEqual(Option.some(request!.spanId))
        expect(yield* apiRequests).toHaveLength(1)
      }).pipe(Effect.provide(clientLayer(() => ok())))
  )

  it.live(
    "on the live clock (the attempt in its own fiber) a request has one http.client span, the SDK's safe one",
    () =>
      Effect.gen(function* () {
        const { spans, tracer } = yield* recordingTracer
        const client = yield* ServiceClient
        yield* Effect.withTracer(client.request("GET", "/albums/a1"), tracer)
        yield* Effect.withTracer(
          Effect.flatMap(client.http.get("/albums/a2"), (response) => response.json),
          tracer
        )
        const http = spans.filter((span) => span.name === "http.client GET")
        // the platform's own span (it sets url.scheme, and its Exit holds the request with its bearer) is never made
        expect(http).toHaveLength(2)
        for (const span of http) {
          expect(span.attributes.has("url.scheme")).toBe(false)
          expect(span.attributes.get("http.response.status_code")).toBe(200)
          expect(span.attributes.get("http.request.header.authorization")).not.toContain("tok-1")
        }
        // and the caller's fiber is left as it was: the platform would trace its own requests
        const platformSpan = yield* Effect.withTracer(
          Effect.flatMap(HttpClient.HttpClient, (raw) => raw.get(`${API_URL}/albums/a3`)),
          tracer
        )
        expect(platformSpan.status).toBe(200)
        expect(spans.filter((span) => span.attributes.has("url.scheme"))).toHaveLength(1)
      }).pipe(Effect.provide(clientLayer(() => ok())))
  )

  it.effect("with a tracer installed, renewals are spans too: getAccessToken, forceRefresh, the token endpoint", () =>
    Effect.gen(function* () {
      const { spans, tracer } = yield* recordingTracer
      const client = yield* ServiceClient
      // tok-1 is rejected: one renewal, then one forced refresh
      yield* Effect.withTracer(client.request("GET", "/me"), tracer)
      const names = spans.map((span) => span.name)
      expect(names).toContain("ClientCredentials.getAccessToken")
      expect(names).toContain("ClientCredentials.forceRefresh")
      expect(names.filter((name) => name === "TokenEndpoint.request")).toHaveLength(2)
      expect(yield* tokenRequests).toHaveLength(2)
    }).pipe(Effect.provide(clientCredentialsClientLayer(routed(rejectsFirstToken()))))
  )
})

describe("the responses client.http hands out", () => {
  it.effect("serve the bytes read within the attempt: text, JSON, bytes, a stream, each as often as asked", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/albums/a1")
      expect(response.status).toBe(200)
      expect(response.headers["x-answer"]).toBe("yes")
      expect(yield* response.json).toEqual({ name: "Café ☕", n: 1 })
      expect(yield* response.text).toBe(JSON.stringify({ name: "Café ☕", n: 1 }))
      const bytes = new Uint8Array(yield* response.arrayBuffer)
      expect(new TextDecoder().decode(bytes)).toBe(JSON.stringify({ name: "Café ☕", n: 1 }))
      const streamed = yield* Stream.runCollect(response.stream)
      const length = Chunk.reduce(streamed, 0, (sum, chunk) => sum + chunk.length)
      expect(length).toBe(bytes.length)
      // the request it holds is the one without the token
      expect(response.request.headers.authorization).toBeUndefined()
      expect(JSON.stringify(response.request.headers)).not.toContain("tok-1")
    }).pipe(Effect.provide(clientLayer(() => ok({ name: "Café ☕", n: 1 }, { "x-answer": "yes" }))))
  )

  it.effect("a 204 has an empty body", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/me/player")
      expect(response.status).toBe(204)
      expect(yield* response.text).toBe("")
      expect((yield* response.arrayBuffer).byteLength).toBe(0)
    }).pipe(Effect.provide(clientLayer(() => ({ status: 204 }))))
  )
})
