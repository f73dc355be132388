/**
 * Test helpers for programs built on service-sdk: a fixed-token provider and a scriptable, request-recording mock
 * `HttpClient`, so tests need no network.
 *
 * @since 2.0.0
 * @module @service-sdk/effect/testing (Effect 4 line, 2.x)
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { TokenProvider } from "./TokenProvider.js"

/**
 * A request as the mock saw it.
 *
 * @since 2.0.0
 */
export interface RecordedRequest {
  readonly method: string
  /** The full URL, query included. */
  readonly url: URL
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  /** The body as text ("" when none). */
  readonly body: string
  /** The body's form parameters (for `application/x-www-form-urlencoded` bodies). */
  readonly form: URLSearchParams
}

/**
 * A scripted answer: a response (a JSON-serialisable `body` is sent as JSON, a string as is), or a transport failure.
 *
 * @since 2.0.0
 */
export type MockResponse =
  | {
      readonly status?: number
      readonly headers?: Readonly<Record<string, string>>
      readonly body?: unknown
    }
  | { readonly transportError: string }

/**
 * How the mock answers: a function of the request and the 0-based call number. Returning an Effect allows delays
 * (`Effect.delay`), hangs (`Effect.never`) and anything else.
 *
 * @since 2.0.0
 */
export type MockHandler = (request: RecordedRequest, call: number) => MockResponse | Effect.Effect<MockResponse>

/**
 * The mock's control surface: the requests it recorded and a way to replace its handler.
 *
 * @since 2.0.0
 */
export interface MockHttpClientService {
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  readonly setHandler: (handler: MockHandler) => Effect.Effect<void>
}

const decoder = new TextDecoder()

const record = (request: HttpClientRequest.HttpClientRequest, url: URL): RecordedRequest => {
  const body =
    request.body._tag === "Uint8Array"
      ? decoder.decode(request.body.body)
      : request.body._tag === "Raw"
        ? String(request.body.body)
        : ""
  const contentType = request.body._tag === "Empty" ? undefined : request.body.contentType
  return {
    method: request.method,
    url,
    headers:
      contentType !== undefined && request.headers["content-type"] === undefined
        ? { ...request.headers, "content-type": contentType }
        : { ...request.headers },
    body,
    form: new URLSearchParams(contentType === "application/x-www-form-urlencoded" ? body : "")
  }
}

const transportError = (request: HttpClientRequest.HttpClientRequest, description: string, cause?: unknown) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({ request, cause: cause ?? new Error(description), description })
  })

const toResponse = (
  request: HttpClientRequest.HttpClientRequest,
  response: Exclude<MockResponse, { readonly transportError: string }>
) => {
  const status = response.status ?? 200
  const text =
    response.body === undefined || status === 204 || status === 304
      ? null
      : typeof response.body === "string"
        ? response.body
        : JSON.stringify(response.body)
  const headers = new Headers(response.headers ?? {})
  if (text !== null && typeof response.body !== "string" && !headers.has("content-type")) {
    headers.set("content-type", "application/json")
  }
  return HttpClientResponse.fromWeb(request, new Response(text, { status, headers }))
}

/**
 * The mock's control surface, provided by {@link MockHttpClient.layer} beside `HttpClient`.
 *
 * @since 2.0.0
 */
export class MockHttpClient extends Context.Service<MockHttpClient, MockHttpClientService>()(
  "service-sdk/testing/MockHttpClient"
) {
  /**
   * An `HttpClient` that answers with `handler` and records every request, and its {@link MockHttpClient} surface.
   *
   * @since 2.0.0
   */
  static layer(handler: MockHandler): Layer.Layer<HttpClient.HttpClient | MockHttpClient> {
    return Layer.effectContext(
      Effect.gen(function* () {
        const recorded = yield* Ref.make<ReadonlyArray<RecordedRequest>>([])
        const current = yield* Ref.make(handler)
        const client = HttpClient.make((request, url, signal) =>
          Effect.gen(function* () {
            const seen = record(request, url)
            const call = (yield* Ref.getAndUpdate(recorded, (all) => [...all, seen])).length
            const answer = (yield* Ref.get(current))(seen, call)
            const response = Effect.isEffect(answer)
              ? yield* Effect.raceFirst(
                  answer,
                  Effect.callback<never, HttpClientError.HttpClientError>((resume) => {
                    const abort = () =>
                      resume(Effect.fail(transportError(request, "the request was aborted", signal.reason)))
                    if (signal.aborted) return abort()
                    signal.addEventListener("abort", abort, { once: true })
                    return Effect.sync(() => signal.removeEventListener("abort", abort))
                  })
                )
              : answer
            if ("transportError" in response) return yield* transportError(request, response.transportError)
            return toResponse(request, response)
          })
        )
        return Context.make(HttpClient.HttpClient, client).pipe(
          Context.add(MockHttpClient, { requests: Ref.get(recorded), setHandler: (next) => Ref.set(current, next) })
        )
      })
    )
  }

  /**
   * A handler answering with `responses` in order (the last one repeats).
   *
   * @since 2.0.0
   */
  static script(...responses: ReadonlyArray<MockResponse | Effect.Effect<MockResponse>>): MockHandler {
    return (_request, call) => responses[Math.min(call, responses.length - 1)] ?? { status: 500 }
  }

  /**
   * A JSON answer.
   *
   * @since 2.0.0
   */
  static json(body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): MockResponse {
    return { status, headers: { "content-type": "application/json", ...headers }, body }
  }
}

/**
 * A `TokenProvider` of a fixed token, for testing code that needs one.
 *
 * @since 2.0.0
 */
export const TestTokenProvider = {
  layer: (token: string | Redacted.Redacted<string> = "test-access-token"): Layer.Layer<TokenProvider> =>
    TokenProvider.layerStatic(token)
}
