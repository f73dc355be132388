/**
 * `http.client` spans that hold nothing secret. The platform's own span ends with the response as its `Exit`, and
 * that object keeps the raw request (its `Authorization` header) and, once read, the body (a token response's
 * tokens), which any tracer can read. This wrapper turns the platform span off for the SDK's requests and records
 * the same span itself: method, URL without credentials, status, redacted headers, and an `Exit` of just the status
 * (or a safe description of the failure).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Headers from "@effect/platform/Headers"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Redacted from "effect/Redacted"
import { traces } from "./liveServices.js"
import { requestSecretValues, safeCause, urlWithoutCredentials } from "@service-sdk/shared/redact"

/**
 * What the request carries that must not reach a span: the values of its redacted headers (`Authorization`, and the
 * credential after its scheme) and of its form body (the token endpoint's secrets). A client may quote them in its
 * failure.
 */
const secretsOf = (
  request: HttpClientRequest.HttpClientRequest,
  redactedNames: ReadonlyArray<string | RegExp>
): Array<string> => {
  const values: Array<string> = []
  for (const value of Object.values(Headers.redact(request.headers, redactedNames))) {
    if (Redacted.isRedacted(value)) values.push(Redacted.value(value) as string)
  }
  const body = request.body
  const form =
    body._tag === "Uint8Array" && body.contentType.startsWith("application/x-www-form-urlencoded")
      ? new TextDecoder().decode(body.body)
      : undefined
  return requestSecretValues(values, form)
}

const traced = (client: HttpClient.HttpClient, request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function* () {
    const url = urlWithoutCredentials(request.url)
    const span = yield* Effect.makeSpan(`http.client ${request.method}`, { kind: "client" })
    span.attribute("http.request.method", request.method)
    if (url !== undefined) {
      span.attribute("server.address", url.origin)
      span.attribute("url.full", url.origin + url.pathname)
      span.attribute("url.path", url.pathname)
    }
    const redactedNames = yield* FiberRef.get(Headers.currentRedactedNames)
    for (const [name, value] of Object.entries(Headers.redact(request.headers, redactedNames))) {
      span.attribute(`http.request.header.${name}`, String(value))
    }
    // The request is passed on as is: no trace-context header is added (the SDK's requests go to the Service only).
    return yield* client.execute(request).pipe(
      Effect.withParentSpan(span),
      Effect.onExit((exit) =>
        // from the millisecond clock: `TestClock` times may be fractional, which `currentTimeNanos` cannot convert
        Effect.map(Clock.currentTimeMillis, (millis) => {
          const endTime = BigInt(Math.round(millis * 1_000_000))
          if (Exit.isSuccess(exit)) {
            span.attribute("http.response.status_code", exit.value.status)
            span.end(endTime, Exit.succeed({ status: exit.value.status }))
          } else {
            span.end(endTime, Exit.fail(safeCause(Cause.squash(exit.cause), secretsOf(request, redactedNames))))
          }
        })
      )
    )
  })

/** The platform's span predicate for the SDK's requests: never its own span. */
const always = () => true

/**
 * Turns the platform's own `http.client` span off for the rest of a fiber the SDK owns (a request attempt's own
 * fiber, `client/attemptTimeout.ts`), so that {@link withSafeSpans} needs no per-request `FiberRef` scope there.
 * Never run it in a caller's fiber: it would stay set there.
 */
export const platformSpansOff: Effect.Effect<void> = FiberRef.set(HttpClient.currentTracerDisabledWhen, always)

/** `client` with the SDK's safe `http.client` span instead of the platform's. */
export const withSafeSpans = (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const untraced = HttpClient.withTracerDisabledWhen(client, always)
  return HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest>) =>
      Effect.flatMap(request, (req) =>
        Effect.withFiberRuntime((fiber) => {
          // the platform's span is already off in this fiber (`platformSpansOff`): no scope to set and restore
          const inner = fiber.getFiberRef(HttpClient.currentTracerDisabledWhen) === always ? client : untraced
          // no span nobody would see (Effect's default tracer records nothing)
          return traces(fiber) ? traced(inner, req) : inner.execute(req)
        })
      ),
    Effect.succeed
  )
}
