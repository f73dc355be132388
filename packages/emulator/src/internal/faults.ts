import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { STATUS_CODES } from "node:http"
import type { Fault } from "../Emulator.js"
import { json } from "./http.js"

const HeaderName = Schema.String.pipe(Schema.pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/))
const HeaderValue = Schema.String.pipe(Schema.pattern(/^[^\r\n\0]*$/))

/**
 * The wire form of a fault (`POST /__emulator/faults`), also used to check programmatic faults.
 *
 * @internal
 */
export const FaultSchema = Schema.Struct({
  target: Schema.Literal("token", "api"),
  count: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 1_000_000)), { exact: true }),
  status: Schema.optionalWith(Schema.Int.pipe(Schema.between(200, 599)), { exact: true }),
  body: Schema.optionalWith(Schema.String, { exact: true }),
  headers: Schema.optionalWith(Schema.Record({ key: HeaderName, value: HeaderValue }), { exact: true }),
  delayMs: Schema.optionalWith(Schema.Number.pipe(Schema.finite(), Schema.between(0, 600_000)), { exact: true }),
  reset: Schema.optionalWith(Schema.Boolean, { exact: true }),
  malformed: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/** @internal */
export const decodeFault = (input: unknown): Effect.Effect<Fault, string> =>
  Schema.decodeUnknown(FaultSchema, { onExcessProperty: "error" })(input).pipe(
    Effect.mapError((error) => ParseResult.TreeFormatter.formatErrorSync(error))
  )

const oauthErrorCode = (status: number): string => {
  if (status === 401) return "invalid_client"
  if (status === 429 || status === 503) return "temporarily_unavailable"
  if (status >= 500) return "server_error"
  return "invalid_request"
}

const defaultFaultBody = (target: Fault["target"], status: number): unknown => {
  const reason = STATUS_CODES[status] ?? "Error"
  return target === "token"
    ? { error: oauthErrorCode(status), error_description: `Injected fault: ${status} ${reason}` }
    : { error: { status, message: `Injected fault: ${reason}` } }
}

const MALFORMED: Record<Fault["target"], string> = {
  token: `{"access_token":"${"x".repeat(16)}`,
  api: `{"id":"6akEvsycLGftJxYudPjmqK","name":"Loopb`
}

const faultResponse = (fault: Fault): HttpServerResponse.HttpServerResponse => {
  const status = fault.status ?? 500
  if (fault.body !== undefined) {
    return HttpServerResponse.text(fault.body, { status, contentType: "application/json; charset=utf-8" })
  }
  if (status === 204 || status === 205 || status === 304) {
    return HttpServerResponse.empty({ status })
  }
  return json(defaultFaultBody(fault.target, status), status)
}

/**
 * Answers one request according to `fault`, or runs `normal` when the fault only delays or adds headers.
 * A `reset` destroys the socket: the client sees a connection reset and no response.
 *
 * @internal
 */
export const applyFault = <E, R>(
  fault: Fault,
  normal: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    if (fault.delayMs !== undefined && fault.delayMs > 0) {
      yield* Effect.sleep(fault.delayMs)
    }
    if (fault.reset === true) {
      const request = yield* HttpServerRequest.HttpServerRequest
      NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
      return yield* Effect.interrupt
    }
    let response: HttpServerResponse.HttpServerResponse
    if (fault.malformed === true) {
      response = HttpServerResponse.text(MALFORMED[fault.target], { contentType: "application/json; charset=utf-8" })
    } else if (fault.status !== undefined || fault.body !== undefined) {
      response = faultResponse(fault)
    } else {
      response = yield* normal
    }
    return fault.headers === undefined ? response : HttpServerResponse.setHeaders(response, fault.headers)
  })
