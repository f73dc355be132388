/**
 * Test helpers for programs built on service-sdk: a fixed-token provider and a scriptable, request-recording mock
 * `HttpClient`, so tests need no network.
 *
 * @since 1.0.0
 * @module @service-sdk/effect/testing
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { TokenProvider } from "./TokenProvider.js"

/**
 * A request as the mock saw it.
 *
 * @since 1.0.0
 * @category models
 */
export interface RecordedRequest {
  readonly method: string
  /** The full URL, query included. */
  readonly url: URL
  /** Lower-cased header names; `content-type` comes from the body when not set explicitly, as on the wire. */
  readonly headers: Readonly<Record<string, string>>
  /** The body as text ("" when empty). */
  readonly body: string
  /** The body as form parameters (for `application/x-www-form-urlencoded` bodies). */
  readonly form: URLSearchParams
}

/**
 * A scripted answer: a response (a JSON-serialisable `body` is sent as JSON, a string as is), or a transport
 * failure.
 *
 * @since 1.0.0
 * @category models
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
 * @since 1.0.0
 * @category models
 */
export type MockHandler = (request: RecordedRequest, call: number) => MockResponse | Effect.Effect<MockResponse>

/**
 * The mock's control surface: the requests it recorded and a way to replace its handler.
 *
 * @since 1.0.0
 * @category models
 */
export interface MockHttpClientService {
  /** Every request so far, oldest first. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Replaces the handler. */
  readonly setHandler: (handler: MockHandler) => Effect.Effect<void>
}

/**
 * The mock's control surface, provided by {@link MockHttpClient.layer} beside `HttpClient`.
 *
 * @since 1.0.0
 * @category tags
 */
export class MockHttpClient extends Context.Tag("service-sdk/testing/MockHttpClient")<
  MockHttpClient,
  MockHttpClientService
>() {
  /**
   * An `HttpClient` answering from `handler`, and the {@link MockHttpClient} that records what it was sent.
   *
   * @since 1.0.0
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
            // like a real client, an aborted signal ends the request (a delayed or hanging answer included)
            const response = Effect.isEffect(answer)
              ? yield* Effect.raceFirst(answer, whenAborted(request, signal))
              : signal.aborted
                ? yield* whenAborted(request, signal)
                : answer
            if ("transportError" in response) {
              return yield* new HttpClientError.RequestError({
                request,
                reason: "Transport",
                cause: new Error(response.transportError),
                description: response.transportError
              })
            }
            return toResponse(request, response)
          })
        )
        return Context.make(HttpClient.HttpClient, client).pipe(
          Context.add(MockHttpClient, {
            requests: Ref.get(recorded),
            setHandler: (next) => Ref.set(current, next)
          })
        )
      })
    )
  }

  /**
   * Answers with `responses` in turn; the last one repeats.
   *
   * @since 1.0.0
   */
  static script(...responses: ReadonlyArray<MockResponse | Effect.Effect<MockResponse>>): MockHandler {
    return (_request, call) => responses[Math.min(call, responses.length - 1)] ?? { status: 500 }
  }

  /**
   * A JSON response.
   *
   * @since 1.0.0
   */
  static json(body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): MockResponse {
    return { status, headers: { "content-type": "application/json", ...headers }, body }
  }
}

const decoder = new TextDecoder()

/** Fails with a transport `RequestError` once `signal` is aborted, as the platform's clients do. */
const whenAborted = (request: HttpClientRequest.HttpClientRequest, signal: AbortSignal) =>
  Effect.async<never, HttpClientError.RequestError>((resume) => {
    const abort = () =>
      resume(
        Effect.fail(
          new HttpClientError.RequestError({
            request,
            reason: "Transport",
            cause: signal.reason,
            description: "the request was aborted"
          })
        )
      )
    if (signal.aborted) return abort()
    signal.addEventListener("abort", abort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", abort))
  })

const record = (request: HttpClientRequest.HttpClientRequest, url: URL): RecordedRequest => {
  const body =
    request.body._tag === "Uint8Array"
      ? decoder.decode(request.body.body)
      : request.body._tag === "Raw"
        ? String(request.body.body)
        : ""
  // Like a real client, send the body's content type as a header unless one was set explicitly.
  const contentType = request.body.contentType
  return {
    method: request.method,
    url,
    headers:
      contentType !== undefined && request.headers["content-type"] === undefined
        ? { ...request.headers, "content-type": contentType }
        : { ...request.headers },
    body,
    form: new URLSearchParams(request.body.contentType === "application/x-www-form-urlencoded" ? body : "")
  }
}

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
 * A `TokenProvider` of a fixed token, for testing code that needs one.
 *
 * @since 1.0.0
 * @category utils
 */
export const TestTokenProvider = {
  /** @since 1.0.0 */
  layer: (token: string | Redacted.Redacted<string>): Layer.Layer<TokenProvider> =>
    Layer.succeed(TokenProvider, TokenProvider.static(token))
}

/**
 * A valid body for each typed resource, as the data API sends it (plain JSON): answer them from
 * {@link MockHttpClient} or a stub `fetch`, with overrides for what your test is about,
 * e.g. `Fixtures.album({ name: "Blue" })` or `Fixtures.savedTracksPage([Fixtures.savedTrack()], { total: 40 })`.
 *
 * @since 1.0.0
 */
export { Fixtures } from "./internal/testing/fixtures.js"

/**
 * The wire (JSON) shape of each resource's body, as {@link Fixtures} returns them.
 *
 * @since 1.0.0
 */
export type {
  AlbumBody,
  AlbumTrackBody,
  ArtistBody,
  ArtistRefBody,
  FollowedArtistsBody,
  PlaybackStateBody,
  PlaylistSnapshotBody,
  SavedTrackBody,
  SavedTracksPageBody,
  TrackBody,
  UserBody
} from "./internal/testing/fixtures.js"
