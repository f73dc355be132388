/**
 * Test helpers for programs built on service-sdk: a fixed-token provider and a scriptable, request-recording mock
 * `HttpClient`, so tests need no network; valid bodies of every resource (`Fixtures`); and the emulator as a layer
 * (`Emulator.layer`), for tests against a real HTTP peer. The same names as the Effect 3 line's module.
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
import type * as Scope from "effect/Scope"
import type { EmulatorConfig, EmulatorOptions, Fault, SignInOptions, SignInTokens, Stats } from "@service-sdk/emulator"
import * as emulator from "./internal/testing/emulator.js"
import type { ConfigurationError } from "./ServiceError.js"
import { TokenProvider } from "./TokenProvider.js"

/**
 * A request as the mock saw it.
 *
 * @since 2.0.0
 * @category models
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
 * @since 2.0.0
 * @category models
 */
export type MockHandler = (request: RecordedRequest, call: number) => MockResponse | Effect.Effect<MockResponse>

/**
 * The mock's control surface: the requests it recorded and a way to replace its handler.
 *
 * @since 2.0.0
 * @category models
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
 * @category tags
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
 * @category utils
 */
export const TestTokenProvider = {
  layer: (token: string | Redacted.Redacted<string> = "test-access-token"): Layer.Layer<TokenProvider> =>
    TokenProvider.layerStatic(token)
}

/**
 * A valid body for each typed resource, as the data API sends it (plain JSON): answer them from
 * {@link MockHttpClient} or a stub `fetch`, with overrides for what your test is about,
 * e.g. `Fixtures.album({ name: "Blue" })` or `Fixtures.savedTracksPage([Fixtures.savedTrack()], { total: 40 })`.
 *
 * @since 2.0.0
 */
export { Fixtures } from "./internal/testing/fixtures.js"

/**
 * The wire (JSON) shape of each resource's body, as {@link Fixtures} returns them.
 *
 * @since 2.0.0
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

/**
 * The emulator (`@service-sdk/emulator`, installed beside this package: `npm install --save-dev
 * @service-sdk/emulator`; a bundle with no peer, so it installs beside Effect 4) as a service of this line.
 * {@link Emulator.layer} starts it on a free loopback port for the layer's lifetime and points the SDK at it:
 * `SERVICE_SDK_AUTH_URL`, `SERVICE_SDK_API_URL`, `SERVICE_SDK_CLIENT_ID` and `SERVICE_SDK_CLIENT_SECRET` read
 * (through `Config`) as the emulator's URLs and default client, ahead of the environment, so
 * `ServiceClient.layerClientCredentials()` needs no option. Its control surface (faults, stats, sign-ins) is on the
 * service.
 *
 * @example
 * ```ts
 * import { ServiceClient } from "@service-sdk/effect"
 * import { Emulator } from "@service-sdk/effect/testing"
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 *
 * const program = Effect.gen(function* () {
 *   const client = yield* ServiceClient
 *   const album = yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
 *   const emulator = yield* Emulator
 *   return { album: album.name, tokenRequests: (yield* emulator.stats).tokenRequests.total }
 * })
 *
 * const TestLayer = ServiceClient.layerClientCredentials().pipe(
 *   Layer.provideMerge(Emulator.layer()),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * Effect.runPromise(program.pipe(Effect.provide(TestLayer)))
 * ```
 *
 * @since 2.0.0
 * @category tags
 */
export class Emulator extends Context.Service<Emulator, Emulator.Service>()("service-sdk/testing/Emulator") {
  /**
   * Starts the emulator in the current scope (it stops when the scope closes). Bad options, a port in use or a
   * missing `@service-sdk/emulator` are a ConfigurationError.
   *
   * @since 2.0.0
   */
  static make(options?: Emulator.Options): Effect.Effect<Emulator.Service, ConfigurationError, Scope.Scope> {
    return emulator.make(options)
  }

  /**
   * The emulator for the layer's lifetime, with the SDK's configuration pointed at it.
   *
   * @since 2.0.0
   */
  static layer(options?: Emulator.Options): Layer.Layer<Emulator, ConfigurationError> {
    return Layer.unwrap(
      Effect.map(emulator.make(options), (service) =>
        Layer.merge(Layer.succeed(Emulator, service), emulator.sdkConfigLayer(service))
      )
    )
  }
}

/**
 * @since 2.0.0
 */
export declare namespace Emulator {
  /**
   * The running emulator: its URLs and default clients, and its control surface as Effects.
   *
   * @since 2.0.0
   */
  export interface Service {
    /** `http://127.0.0.1:<port>` (token endpoint `/api/token`, consent page `/authorize`) */
    readonly authUrl: string
    /** `http://127.0.0.1:<port>/v1` */
    readonly apiUrl: string
    readonly port: number
    /** the default confidential client's id, `emulator-client` */
    readonly clientId: string
    /** the default confidential client's secret, `emulator-secret` */
    readonly clientSecret: string
    /** the public client's id, `emulator-public-client` (no secret; PKCE required) */
    readonly publicClientId: string
    /** request counters since start or the last reset */
    readonly stats: Effect.Effect<Stats>
    /** a fault for the next `count` token or API requests; a bad fault is a ConfigurationError */
    readonly injectFault: (fault: Fault) => Effect.Effect<void, ConfigurationError>
    /** changes token lifetime, rotation, auto-approval, PKCE or playback while it runs */
    readonly configure: (config: EmulatorConfig) => Effect.Effect<void, ConfigurationError>
    /** revokes an access or refresh token; succeeds with whether it was known */
    readonly revoke: (token: string) => Effect.Effect<boolean>
    /** signs a user in as if they had approved the consent page: their tokens, as the token endpoint answers them */
    readonly signIn: (options: SignInOptions) => Effect.Effect<SignInTokens, ConfigurationError>
    /** data API requests made with a valid user token, by user id */
    readonly apiRequestsByUser: Effect.Effect<Readonly<Record<string, number>>>
    /** back to the start options: clears tokens, codes, faults, stats and library changes */
    readonly reset: Effect.Effect<void>
  }
  /**
   * `Emulator.start`'s options (port, clients, token lifetime, rotation, auto-approval, PKCE, playback).
   *
   * @since 2.0.0
   */
  export type Options = EmulatorOptions
}
