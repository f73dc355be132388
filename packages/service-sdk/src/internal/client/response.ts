/**
 * The responses `ServiceClient.http` hands out (the SDK's own requests use the answer's text, `requestPolicy.ts`).
 * Each is read in full within its attempt (so the attempt's timeout covers the headers and the body, and the
 * connection goes back to the pool at once), then made again with the platform's public
 * `HttpClientResponse.fromWeb` on the request as it was before the bearer token was attached: the platform's own
 * response, and every `ResponseError` its body readers raise, hold the request that was sent, Authorization header
 * included. The WHATWG `Response` under it serves the bytes already read, with no body stream
 * (`packages/shared/src/bufferedResponse.ts`, one class for both lines).
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { bufferedWebResponse } from "@service-sdk/shared/bufferedResponse"

export { isRepresentable } from "@service-sdk/shared/bufferedResponse"

/**
 * A response with `status`, `headers` (read when asked for) and the bytes of `body`, on `request` (the request
 * without credentials).
 */
export const bufferedResponse = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: () => Readonly<Record<string, string>>,
  body: ArrayBuffer
): HttpClientResponse.HttpClientResponse =>
  HttpClientResponse.fromWeb(request, bufferedWebResponse(status, headers, body))
