/**
 * The responses `ServiceClient.http` hands out (the SDK's own requests use the answer's text, `requestPolicy.ts`).
 * Each is read in full within its attempt, then made again with the platform's public `HttpClientResponse.fromWeb`
 * on the request as it was before the bearer token was attached, over the bytes already read
 * (`packages/shared/src/bufferedResponse.ts`, one class for both lines: no body stream, headers on demand).
 */
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import { bufferedWebResponse } from "@service-sdk/shared/bufferedResponse"

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
