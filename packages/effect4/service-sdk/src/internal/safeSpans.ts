/**
 * `http.client` spans that hold nothing secret (DESIGN section 7: the platform's `http.client` spans never hold a raw
 * `Authorization` header or token response body). The platform's own span ends with the response as its `Exit`, and
 * that object keeps the raw request (its `Authorization` header) and, once read, the body (a token response's
 * tokens); a failure keeps the request too, and the client's error may quote it. This wrapper turns the platform span
 * off for the SDK's requests and, when a tracer would see it, records the same span itself: method, URL without
 * credentials, status, redacted headers, and an `Exit` of just the status (or the failure's description, masked of
 * what the request carried). No trace-context header is added: the SDK's requests go to the Service only.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import { constTrue } from "effect/Function"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Redacted from "effect/Redacted"
import { traces } from "./liveServices.js"
import { requestSecretValues, safeCause, urlWithoutCredentials } from "@service-sdk/shared/redact"

/** The values of the request's redacted headers and of its form body: a client may quote them in its failure. */
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
      ? (body.text ?? new TextDecoder().decode(body.body))
      : undefined
  return requestSecretValues(values, form)
}

const traced = <A extends { readonly status: number }, E, R>(
  sent: Effect.Effect<A, E, R>,
  request: HttpClientRequest.HttpClientRequest,
  fiber: Fiber.Fiber<unknown, unknown>
) =>
  Effect.flatMap(
    Effect.makeSpan(`http.client ${request.method}`, { kind: "client" }),
    (span): Effect.Effect<A, E, R> => {
      const url = urlWithoutCredentials(request.url)
      span.attribute("http.request.method", request.method)
      if (url !== undefined) {
        span.attribute("server.address", url.origin)
        span.attribute("url.full", url.origin + url.pathname)
        span.attribute("url.path", url.pathname)
      }
      const redactedNames = fiber.getRef(Headers.CurrentRedactedNames)
      for (const [name, value] of Object.entries(Headers.redact(request.headers, redactedNames))) {
        span.attribute(`http.request.header.${name}`, String(value))
      }
      return sent.pipe(
        Effect.withParentSpan(span),
        Effect.onExit((exit) =>
          // from the millisecond clock: `TestClock` times may be fractional
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
    }
  )

/** `client` with the SDK's safe `http.client` span instead of the platform's. */
export const withSafeSpans = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest, HttpClientError.HttpClientError>) =>
      Effect.flatMap(request, (req) =>
        Effect.withFiber((fiber) => {
          const sent = Effect.provideService(client.execute(req), HttpClient.TracerDisabledWhen, constTrue)
          // no span nobody would see (Effect's default tracer exports nothing)
          return traces(fiber) ? traced(sent, req, fiber) : sent
        })
      ),
    Effect.succeed
  )
