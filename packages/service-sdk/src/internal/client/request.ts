/**
 * `ServiceClient.request`: builds a JSON request under the API's base URL, sends it through the request policy, and
 * turns the answer into a value (JSON, decoded through a Schema when one is given) or an ApiError.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import type * as Schema from "effect/Schema"
import { ApiError } from "../../ServiceError.js"
import { traces } from "../liveServices.js"
import { bearerOf, maskJson } from "@service-sdk/shared/redact"
import { apiErrorMessage, parseJson } from "./body.js"
import { decodeOr } from "./decode.js"
import type { Answer, Policy, PolicyError } from "./requestPolicy.js"

/** Query parameters; `undefined` and `null` are left out, arrays repeat the key. */
export type Query = Readonly<
  Record<string, string | number | boolean | ReadonlyArray<string | number | boolean> | null | undefined>
>

export interface RequestOptions<A> {
  readonly query?: Query | undefined
  /** Sent as JSON. */
  readonly body?: unknown
  /** Decodes the JSON answer (an empty answer, such as 204, is `undefined`); unknown fields are dropped. */
  readonly schema?: Schema.Schema<A, any> | undefined
}

export type RequestFailure = ApiError | PolicyError

export type Request = <A = unknown>(
  method: HttpMethod.HttpMethod,
  path: string,
  options?: RequestOptions<A>
) => Effect.Effect<A, RequestFailure>

const MAX_ISSUES = 5

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text)

/** Which fields are wrong and what was expected, without echoing the body (it may be large). */
const describeIssues = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => {
    const where = issue.path.length === 0 ? "the body" : issue.path.join(".")
    if (issue._tag === "Missing") return `${where} is missing`
    const expected = /^Expected (.*?), actual /s.exec(issue.message)?.[1]
    return expected === undefined ? `${where} is invalid` : `${where} should be ${clip(expected, 80)}`
  })
  const more = issues.length > MAX_ISSUES ? `, and ${issues.length - MAX_ISSUES} more` : ""
  return `${lines.join("; ")}${more}`
}

const queryParams = (query: Query): Array<[string, string]> =>
  Object.entries(query).flatMap(
    ([key, value]): Array<[string, string]> =>
      value === undefined || value === null
        ? []
        : Array.isArray(value)
          ? value.map((item): [string, string] => [key, String(item)])
          : [[key, String(value)]]
  )

export const make = (send: Policy["send"]): Request => {
  // no generator: this runs once per request
  const interpret = <A>(
    answer: Answer<string>,
    request: HttpClientRequest.HttpClientRequest,
    label: string,
    schema: Schema.Schema<A, any> | undefined
  ): Effect.Effect<A, ApiError> => {
    const status = answer.status
    // read as text within its attempt already (requestPolicy.ts)
    const text = answer.body
    if (status < 200 || status >= 300) {
      // The API may echo the request: its bearer token never reaches the error.
      const secrets = [Redacted.value(answer.token), bearerOf(request.headers)]
      const payload = maskJson(Option.getOrUndefined(parseJson(text)), secrets)
      const detail = apiErrorMessage(payload)
      return Effect.fail(
        new ApiError({
          message: `${label} failed with ${status}${detail !== undefined ? `: ${detail}` : ""}`,
          status,
          payload
        })
      )
    }
    let body: unknown
    if (status !== 204 && text.trim() !== "") {
      const parsed = parseJson(text)
      if (Option.isNone(parsed)) {
        return Effect.fail(new ApiError({ message: `the API's answer to ${label} (${status}) is not JSON`, status }))
      }
      body = parsed.value
    }
    if (schema === undefined) return Effect.succeed(body as A)
    return decodeOr(
      schema,
      body,
      (error) =>
        new ApiError({
          message:
            body === undefined
              ? `the API's answer to ${label} (${status}) has no body, and one was expected`
              : `unexpected answer to ${label} (${status}): ${describeIssues(error)}`,
          status
        })
    )
  }

  return (method, path, options = {}) => {
    const label = `${method} ${path}`
    const attributes = { "http.request.method": method, "url.path": path }
    // One step for the request and the span decision. A body JSON cannot encode (a cycle, a BigInt) is a defect of
    // this call, not a throw.
    return Effect.withFiberRuntime((fiber) => {
      let request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.acceptJson)
      if (options.query !== undefined) request = HttpClientRequest.setUrlParams(request, queryParams(options.query))
      if (options.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.body)
      const call = Effect.flatMap(send(request), (answer) => interpret(answer, request, label, options.schema))
      // no stack capture: it costs as much as decoding an album; no span at all when no tracer would see it
      return traces(fiber)
        ? Effect.withSpan(call, "ServiceClient.request", { attributes, captureStackTrace: false })
        : call
    })
  }
}
