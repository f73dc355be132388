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
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Stream from "effect/Stream"

class SanitizedResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId

  constructor(
    private readonly original: HttpClientResponse.HttpClientResponse,
    readonly request: HttpClientRequest.HttpClientRequest
  ) {
    super()
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
    return Effect.mapError(this.original.text, this.rebind)
  }
  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.mapError(this.original.json, this.rebind)
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return Effect.mapError(this.original.arrayBuffer, this.rebind)
  }
  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return Effect.mapError(this.original.formData, this.rebind)
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.mapError(this.original.urlParamsBody, this.rebind)
  }
  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return Stream.mapError(this.original.stream, this.rebind)
  }

  toJSON(): unknown {
    return IncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

/** `response`, re-homed on `request` (the request without credentials). */
export const sanitizedResponse = (
  response: HttpClientResponse.HttpClientResponse,
  request: HttpClientRequest.HttpClientRequest
): HttpClientResponse.HttpClientResponse => new SanitizedResponse(response, request)

/** A response whose body was read already, for handing out again (a retried 5xx that ran out of retries). */
export const bufferedResponse = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ArrayBuffer
): HttpClientResponse.HttpClientResponse =>
  HttpClientResponse.fromWeb(
    request,
    new Response(body.byteLength === 0 ? null : body, { status, headers: Object.entries(headers) })
  )
