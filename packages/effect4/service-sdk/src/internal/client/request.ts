/**
 * `ServiceClient.request`: one request through the policy, its answer decoded through a Schema; a non-2xx answer is
 * ApiError (its text masked of the bearer token, cleaned and capped). The typed resources are `resources.ts`.
 */
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import {
  ApiError,
  type AuthenticationError,
  type RateLimitError,
  type TokenCacheError,
  type TransportError
} from "../../ServiceError.js"
import { withSpanWhenTraced } from "../liveServices.js"
import { cleanUntrustedText, maskJson } from "@service-sdk/shared/redact"
import { exitDecoder } from "./decode.js"
import { apiErrorMessage, errorPayload } from "./body.js"
import type { Answer, Policy } from "./requestPolicy.js"

export type Query = Readonly<Record<string, string | number | boolean | ReadonlyArray<string | number> | undefined>>

export interface RequestOptions<A> {
  readonly query?: Query | undefined
  readonly body?: unknown
  readonly schema?: Schema.Codec<A, any> | undefined
}

export type RequestError = ApiError | AuthenticationError | RateLimitError | TransportError | TokenCacheError

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS"

export type Request = <A = unknown>(
  method: HttpMethod,
  path: string,
  options?: RequestOptions<A>
) => Effect.Effect<A, RequestError>

const queryParams = (query: Query): Array<[string, string]> =>
  Object.entries(query).flatMap(
    ([key, value]): Array<[string, string]> =>
      value === undefined
        ? []
        : Array.isArray(value)
          ? value.map((item): [string, string] => [key, String(item)])
          : [[key, String(value)]]
  )

type Decoder = (input: unknown) => Effect.Effect<unknown, unknown>

/** Each schema's decoder, made once (not on every request). */
const decoders = new WeakMap<object, Decoder>()

/**
 * The SDK's own schemas (plain structs: nothing asynchronous to run), decoded synchronously to an `Exit` (itself an
 * Effect) through the compiled pass of `decode.ts`; a caller's own schema keeps `decodeUnknownEffect`.
 */
const synchronous = new WeakSet<object>()

/** Marks one of the SDK's own schemas for the compiled, synchronous decoding (`resources.ts` marks its schemas). */
export const decodeSynchronously = (schema: object): void => {
  synchronous.add(schema)
}

const decoderOf = <A>(schema: Schema.Codec<A, any>): ((input: unknown) => Effect.Effect<A, unknown>) => {
  let decode = decoders.get(schema)
  if (decode === undefined) {
    decode = (synchronous.has(schema) ? exitDecoder(schema) : Schema.decodeUnknownEffect(schema)) as Decoder
    decoders.set(schema, decode)
  }
  return decode as (input: unknown) => Effect.Effect<A, unknown>
}

export const make = (send: Policy["send"]): Request => {
  // no generator: this runs once per request
  const interpret = <A>(
    answer: Answer<string>,
    label: string,
    schema: Schema.Codec<A, any> | undefined
  ): Effect.Effect<A, ApiError> => {
    const status = answer.status
    if (status < 200 || status >= 300) {
      // The API may echo the request: its bearer token never reaches the error.
      const payload = maskJson(errorPayload(answer.body), [Redacted.value(answer.token)])
      const detail = apiErrorMessage(payload)
      return Effect.fail(
        new ApiError({
          message: `${label} failed with ${status}${detail !== undefined ? `: ${cleanUntrustedText(detail)}` : ""}`,
          status,
          payload
        })
      )
    }
    // read as text within its attempt already (requestPolicy.ts)
    const text = answer.body
    let body: unknown
    if (status !== 204 && text.trim() !== "") {
      try {
        body = JSON.parse(text)
      } catch {
        return Effect.fail(new ApiError({ message: `the API's answer to ${label} (${status}) is not JSON`, status }))
      }
    }
    if (schema === undefined) return Effect.succeed(body as A)
    return Effect.mapError(
      decoderOf(schema)(body),
      () =>
        new ApiError({
          message:
            body === undefined
              ? `the API's answer to ${label} (${status}) has no body, and one was expected`
              : `unexpected answer to ${label} (${status}): it does not match the expected shape`,
          status
        })
    )
  }

  return (method, path, options = {}) => {
    const label = `${method} ${path}`
    return Effect.suspend(() => {
      let request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.acceptJson)
      if (options.query !== undefined) request = HttpClientRequest.setUrlParams(request, queryParams(options.query))
      if (options.body !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, options.body)
      return Effect.flatMap(send(request), (answer) => interpret(answer, label, options.schema))
    }).pipe(
      // no span at all when no tracer would see it
      withSpanWhenTraced("ServiceClient.request", {
        attributes: { "http.request.method": method, "url.path": path }
      })
    )
  }
}
