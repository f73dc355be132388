/**
 * The client's request policy for data API calls, in one place:
 *
 * - the bearer token is asked of the provider on every attempt; a token failure surfaces as is and is never retried
 *   here (the provider already retried its own endpoint: no nested retry storms);
 * - each attempt (headers and body) is bounded by `timeout` (`attemptTimeout.ts`: past it the attempt is
 *   interrupted, which aborts its request); the body is read within the attempt;
 * - transport failures, timeouts and 5xx are retried with the shared backoff, up to `maxRetries`, for idempotent
 *   methods (RFC 9110 §9.2.2); a non-idempotent request only on a 429 or a 503 with `Retry-After`;
 * - 429 waits `Retry-After` (1 s when absent); a wait longer than `maxRetryAfter` fails at once with RateLimitError,
 *   as do 429s that outlast the retries;
 * - 401 forces one token refresh (`forceRefresh(rejected)`) and one more round; a second 401 is AuthenticationError;
 * - a 5xx that outlasts the retries is the answer (`request` makes it ApiError).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Headers from "effect/http/Headers"
import * as Redacted from "effect/Redacted"
import { AuthenticationError, RateLimitError, type TokenCacheError, TransportError } from "../../ServiceError.js"
import { parseRetryAfter, Retryable, withRetries } from "../retry.js"
import { withSafeSpans } from "../safeSpans.js"
import { describeCause, maskJson, maskSecrets, safeCause } from "@service-sdk/shared/redact"
import { timeoutOrElse } from "./attemptTimeout.js"
import { apiErrorMessage, errorPayload } from "./body.js"
import { bufferedResponse } from "./response.js"

export interface PolicyConfig {
  /** The API's base URL, without a trailing slash. */
  readonly apiUrl: string
  readonly timeout: Duration.Duration
  readonly maxRetries: number
  readonly maxRetryAfter: Duration.Duration
}

type TokenFailure = AuthenticationError | TransportError | TokenCacheError

/** Where the bearer token comes from. A fixed token has no `forceRefresh`: a 401 is final. */
export interface TokenSource {
  readonly getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  readonly forceRefresh?:
    | ((rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, TokenFailure>)
    | undefined
}

export type PolicyError = AuthenticationError | RateLimitError | TransportError | TokenCacheError

/** The wait for a 429 without `Retry-After`. */
export const DEFAULT_RETRY_AFTER = Duration.seconds(1)

/** RFC 9110 §9.2.2: repeating these has the effect of sending them once. */
export const isIdempotent = (method: string): boolean =>
  method === "GET" || method === "HEAD" || method === "PUT" || method === "DELETE" || method === "OPTIONS"

/** A body read in full: its text (the SDK's own requests, which decode it anyway) or its bytes (`http`). */
export type Body = string | ArrayBuffer

/** An answer of the API, read in full within its attempt, and the bearer token it was obtained with. */
export interface Answer<B extends Body = Body> {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: B
  readonly token: Redacted.Redacted<string>
}

/** How an attempt reads the body. */
type Read<B extends Body> = (
  response: HttpClientResponse.HttpClientResponse
) => Effect.Effect<B, HttpClientError.HttpClientError>

// the platform decodes text straight from the received body (no second decode)
const readText: Read<string> = (response) => response.text
const readBytes: Read<ArrayBuffer> = (response) => response.arrayBuffer

/** The headers are read when asked for (most answers need none of them); a class: its getter is made once. */
class LazyAnswer<B extends Body> implements Answer<B> {
  #headers: Headers.Headers | undefined
  constructor(
    readonly status: number,
    private readonly response: HttpClientResponse.HttpClientResponse,
    readonly body: B,
    readonly token: Redacted.Redacted<string>
  ) {}
  get headers(): Headers.Headers {
    if (this.#headers === undefined) this.#headers = this.response.headers
    return this.#headers
  }
}

/** A 5xx worth another attempt; when the retries run out, it is the answer. */
class ServerError {
  constructor(readonly answer: Answer<Body>) {}
}

type RetryableFailure = RateLimitError | TransportError | ServerError

/** A path or URL under `apiUrl`. URLs already under it are kept (paging's `next`); anything else is appended. */
export const resolveUrl = (apiUrl: string, url: string): string =>
  url === apiUrl || url.startsWith(`${apiUrl}/`) || url.startsWith(`${apiUrl}?`)
    ? url
    : `${apiUrl}${url.startsWith("/") ? "" : "/"}${url}`

const describe = (request: HttpClientRequest.HttpClientRequest) => `${request.method} ${request.url}`

export interface Policy {
  /** Sends a request (path or URL under `apiUrl`) through the policy; the answer is read in full. */
  readonly send: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<Answer<string>, PolicyError>
  /** The same, as an `HttpClient` whose responses hold the request without the token. */
  readonly http: HttpClient.HttpClient.With<PolicyError>
}

export const make = (config: PolicyConfig, tokens: TokenSource, httpClient: HttpClient.HttpClient): Policy => {
  const { maxRetryAfter, timeout } = config
  const safeClient = withSafeSpans(httpClient)

  const classify = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    answer: Answer<B>
  ): Effect.Effect<Answer<B>, RateLimitError | Retryable<RetryableFailure>> =>
    Effect.gen(function* () {
      if (answer.status === 429) {
        const retryAfter = (yield* parseRetryAfter(answer.headers["retry-after"])) ?? DEFAULT_RETRY_AFTER
        if (Duration.isGreaterThan(retryAfter, maxRetryAfter)) {
          return yield* new RateLimitError({
            message: `the API is rate limiting requests (429 on ${describe(request)}) and asks to wait ${Duration.format(retryAfter)}, longer than maxRetryAfter (${Duration.format(maxRetryAfter)})`,
            retryAfter
          })
        }
        return yield* Effect.fail(
          new Retryable<RetryableFailure>(
            new RateLimitError({
              message: `the API kept rate limiting requests (429 on ${describe(request)}) after every retry; retry after ${Duration.format(retryAfter)}`,
              retryAfter
            }),
            retryAfter
          )
        )
      }
      const retryAfter = answer.status === 503 ? yield* parseRetryAfter(answer.headers["retry-after"]) : undefined
      const retryable =
        (isIdempotent(request.method) || retryAfter !== undefined) &&
        !(retryAfter !== undefined && Duration.isGreaterThan(retryAfter, maxRetryAfter))
      return retryable
        ? yield* Effect.fail(new Retryable<RetryableFailure>(new ServerError(answer as Answer<Body>), retryAfter))
        : answer
    })

  const transportFailure = (
    request: HttpClientRequest.HttpClientRequest,
    token: Redacted.Redacted<string>,
    cause: HttpClientError.HttpClientError
  ) => {
    const error = new TransportError({
      message: `cannot reach the API (${describe(request)}): ${maskSecrets(describeCause(cause.reason), [Redacted.value(token)])}`,
      cause: safeCause(cause.reason, [Redacted.value(token)])
    })
    return Effect.fail(isIdempotent(request.method) ? new Retryable<RetryableFailure>(error) : error)
  }

  const timedOut = (request: HttpClientRequest.HttpClientRequest) => () => {
    const error = new TransportError({
      message: `the API did not answer ${describe(request)} within ${Duration.format(timeout)}`
    })
    return Effect.fail(isIdempotent(request.method) ? new Retryable<RetryableFailure>(error) : error)
  }

  /** One attempt with `token`: the request, then its whole body, within `timeout`. */
  const attempt = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    token: Redacted.Redacted<string>,
    read: Read<B>
  ): Effect.Effect<Answer<B>, RateLimitError | TransportError | Retryable<RetryableFailure>> =>
    Effect.suspend(() => {
      // the SDK's safe `http.client` span (`safeSpans.ts`), never the platform's
      return safeClient.execute(HttpClientRequest.bearerToken(request, Redacted.value(token))).pipe(
        Effect.flatMap((response) =>
          Effect.map(read(response), (body) => new LazyAnswer(response.status, response, body, token))
        ),
        Effect.catchTag("HttpClientError", (cause) => transportFailure(request, token, cause)),
        (self) => timeoutOrElse(self, timeout, timedOut(request)),
        Effect.flatMap((answer) =>
          // most answers need no decision: only 429 and 5xx are looked at
          answer.status === 429 || answer.status >= 500 ? classify(request, answer) : Effect.succeed(answer)
        )
      )
    })

  const round = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    token: Effect.Effect<Redacted.Redacted<string>, TokenFailure>,
    read: Read<B>
  ) =>
    withRetries(
      Effect.flatMap(token, (used) => attempt(request, used, read)),
      config.maxRetries
    ).pipe(
      Effect.catchIf(
        (failure): failure is ServerError => failure instanceof ServerError,
        (failure) => Effect.succeed(failure.answer as Answer<B>)
      )
    ) as Effect.Effect<Answer<B>, PolicyError>

  const rejected = (
    request: HttpClientRequest.HttpClientRequest,
    payload: unknown,
    refreshed: boolean,
    used: ReadonlyArray<Redacted.Redacted<string>>
  ) => {
    // The API may echo the request: the bearer tokens it was sent never reach the error.
    const detail = apiErrorMessage(maskJson(payload, used.map(Redacted.value)))
    return new AuthenticationError({
      message: `the API rejected the access token (401 on ${describe(request)})${
        refreshed
          ? " even after a token refresh"
          : tokens.forceRefresh === undefined
            ? "; a fixed access token cannot be refreshed"
            : ""
      }${detail !== undefined ? `: ${detail}` : ""}`,
      status: 401,
      payload: { error: "invalid_token", ...(detail !== undefined ? { error_description: detail } : {}) }
    })
  }

  const execute = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    read: Read<B>
  ): Effect.Effect<Answer<B>, PolicyError> =>
    Effect.flatMap(round(request, tokens.getAccessToken, read), (first) => {
      if (first.status !== 401) return Effect.succeed(first)
      const forceRefresh = tokens.forceRefresh
      if (forceRefresh === undefined) {
        return Effect.fail(rejected(request, errorPayload(first.body), false, [first.token]))
      }
      return Effect.gen(function* () {
        yield* Effect.logDebug(`${describe(request)}: answered 401, forcing one token refresh`)
        const fresh = yield* forceRefresh(first.token)
        const second = yield* round(request, Effect.succeed(fresh), read)
        if (second.status !== 401) return second
        return yield* rejected(request, errorPayload(second.body), true, [first.token, fresh, second.token])
      })
    })

  const send = (request: HttpClientRequest.HttpClientRequest) =>
    execute(HttpClientRequest.setUrl(request, resolveUrl(config.apiUrl, request.url)), readText)

  // responses are made again on the request as it was before the token was attached, over the bytes already read
  // (`packages/shared/src/bufferedResponse.ts`: no body stream, headers on demand)
  const http = HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest>) =>
      Effect.flatMap(request, (req) =>
        Effect.map(execute(req, readBytes), (answer) =>
          bufferedResponse(req, answer.status, () => answer.headers, answer.body)
        )
      ),
    (request) => Effect.succeed(HttpClientRequest.setUrl(request, resolveUrl(config.apiUrl, request.url)))
  )
  return { send, http }
}
