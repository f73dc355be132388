/**
 * The responses the client hands out. Each is read in full within its attempt (so the attempt's timeout covers the
 * headers and the body, and the connection goes back to the pool at once), then made again with the platform's
 * public `HttpClientResponse.fromWeb` on the request as it was before the bearer token was attached: the platform's
 * own response, and every `ResponseError` its body readers raise, hold the request that was sent, Authorization
 * header included.
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"

/** The bearer token each handed-out response was obtained with, kept out of the response object itself. */
const bearers = new WeakMap<HttpClientResponse.HttpClientResponse, string>()

/** Statuses a WHATWG `Response` can carry. */
export const isRepresentable = (status: number): boolean => Number.isInteger(status) && status >= 200 && status <= 599

/**
 * A response with `status`, `headers` and the bytes of `body`, on `request` (the request without credentials).
 * `bearer` is the token it was obtained with: the secret an error text in its body must not echo.
 */
export const bufferedResponse = (
  request: HttpClientRequest.HttpClientRequest,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ArrayBuffer,
  bearer: string | undefined
): HttpClientResponse.HttpClientResponse => {
  // a 204/205/304 (or any empty answer) has a null body: a WHATWG Response refuses a body on those statuses
  const empty = body.byteLength === 0 || status === 204 || status === 205 || status === 304
  const response = HttpClientResponse.fromWeb(
    request,
    new Response(empty ? null : body, { status, headers: Object.entries(headers) })
  )
  if (bearer !== undefined) bearers.set(response, bearer)
  return response
}

/** The bearer token `response` was obtained with (none for a response not handed out by the client). */
export const bearerSentWith = (response: HttpClientResponse.HttpClientResponse): string | undefined =>
  bearers.get(response)
