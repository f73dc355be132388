/**
 * The responses `ServiceClient.http` hands out (the SDK's own requests use the answer's bytes, `requestPolicy.ts`).
 * Each is read in full within its attempt (so the attempt's timeout covers the
 * headers and the body, and the connection goes back to the pool at once), then made again with the platform's
 * public `HttpClientResponse.fromWeb` on the request as it was before the bearer token was attached: the platform's
 * own response, and every `ResponseError` its body readers raise, hold the request that was sent, Authorization
 * header included.
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"

/** Statuses a WHATWG `Response` can carry. */
export const isRepresentable = (status: number): boolean => Number.isInteger(status) && status >= 200 && status <= 599

/**
 * A response with `status`, `headers` and the bytes of `body`, on `request` (the request without credentials).
 */
export const bufferedResponse = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ArrayBuffer
): HttpClientResponse.HttpClientResponse => {
  // a 204/205/304 (or any empty answer) has a null body: a WHATWG Response refuses a body on those statuses
  const empty = body.byteLength === 0 || status === 204 || status === 205 || status === 304
  return HttpClientResponse.fromWeb(
    request,
    new Response(empty ? null : body, { status, headers: Object.entries(headers) })
  )
}
