/**
 * Responses handed out by the client without the bearer token: the platform's response (and every `ResponseError`
 * its body readers raise) holds the request that was sent, Authorization header included. These hold the request as
 * it was before the token was attached.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import type * as UrlParams from "@effect/platform/UrlParams"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Stream from "effect/Stream"
import { bearerOf } from "../redact.js"
import { AttemptTimeout, type Bound } from "./attemptBound.js"

class SanitizedResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId

  constructor(
    private readonly original: HttpClientResponse.HttpClientResponse,
    readonly request: HttpClientRequest.HttpClientRequest,
    private readonly bound: Bound | undefined,
    private readonly timeout: Duration.Duration | undefined
  ) {
    super()
  }

  private timedOut(duration: Duration.Duration): HttpClientError.ResponseError {
    return new HttpClientError.ResponseError({
      request: this.request,
      response: this,
      reason: "Decode",
      cause: new AttemptTimeout(duration),
      description: "the body did not arrive in time"
    })
  }

  /**
   * A body read: its errors re-homed; with the attempt's bound, the end of the read releases it (a failed or
   * interrupted read aborts the request); without one, the read has its own `timeout`.
   */
  private read<A>(effect: Effect.Effect<A, HttpClientError.ResponseError>) {
    const bound = this.bound
    if (bound === undefined) {
      const rebound = Effect.mapError(effect, this.rebind)
      const timeout = this.timeout
      return timeout === undefined
        ? rebound
        : Effect.timeoutFail(rebound, { duration: timeout, onTimeout: () => this.timedOut(timeout) })
    }
    return effect.pipe(
      Effect.mapError((error) => (bound.expired ? this.timedOut(bound.timeout) : this.rebind(error))),
      Effect.onExit((exit) => Effect.sync(() => (Exit.isSuccess(exit) ? bound.release() : bound.abort())))
    )
  }

  private readonly rebind = (error: HttpClientError.ResponseError): HttpClientError.ResponseError =>
    new HttpClientError.ResponseError({
      request: this.request,
      response: this,
      reason: error.reason,
      cause: error.cause,
      ...(error.description !== undefined ? { description: error.description } : {})
    })

  get status() {
    return this.original.status
  }
  get headers() {
    return this.original.headers
  }
  get cookies() {
    return this.original.cookies
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return this.read(this.original.text)
  }
  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return this.read(this.original.json)
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return this.read(this.original.arrayBuffer)
  }
  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return this.read(this.original.formData)
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return this.read(this.original.urlParamsBody)
  }
  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    const bound = this.bound
    const stream = Stream.mapError(this.original.stream, (error) =>
      bound?.expired === true ? this.timedOut(bound.timeout) : this.rebind(error)
    )
    return bound === undefined
      ? stream
      : Stream.onEnd(
          stream,
          Effect.sync(() => bound.release())
        ).pipe(Stream.onError(() => Effect.sync(() => bound.abort())))
  }

  toJSON(): unknown {
    return IncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

/**
 * `response`, re-homed on `request` (the request without credentials). `bound` is the attempt's (released when
 * the body has been read); without one, `timeout` bounds each body read.
 */
export const sanitizedResponse = (
  response: HttpClientResponse.HttpClientResponse,
  request: HttpClientRequest.HttpClientRequest,
  bound?: Bound,
  timeout?: Duration.Duration
): HttpClientResponse.HttpClientResponse => {
  const sanitized = new SanitizedResponse(response, request, bound, timeout)
  const bearer = bearerOf(response.request.headers)
  if (bearer !== undefined) bearers.set(sanitized, bearer)
  return sanitized
}

/** The bearer token each handed-out response was obtained with, kept out of the response object itself. */
const bearers = new WeakMap<HttpClientResponse.HttpClientResponse, string>()

/** The bearer token `response` was obtained with: the secret an error text in its body must not echo. */
export const bearerSentWith = (response: HttpClientResponse.HttpClientResponse): string | undefined =>
  bearers.get(response)

/** A response whose body was read already, for handing out again (a retried 5xx that ran out of retries). */
export const bufferedResponse = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ArrayBuffer,
  from?: HttpClientResponse.HttpClientResponse
): HttpClientResponse.HttpClientResponse => {
  const buffered = HttpClientResponse.fromWeb(
    request,
    new Response(body.byteLength === 0 ? null : body, { status, headers: Object.entries(headers) })
  )
  const bearer = from === undefined ? undefined : bearers.get(from)
  if (bearer !== undefined) bearers.set(buffered, bearer)
  return buffered
}
