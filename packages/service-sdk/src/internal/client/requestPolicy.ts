/**
 * The client's request policy for data API calls, in one place. Every data API request goes
 * through {@link make}:
 *
 * - the bearer token is asked of the provider on every attempt; a token failure surfaces as is and is never retried
 *   here (the provider already retried its own endpoint: no nested retry storms);
 * - each attempt (headers and body) is bounded by `timeout` (`attemptTimeout.ts`: past it the attempt is
 *   interrupted, which aborts its request); the body is read within the attempt (`response.ts`);
 * - transport failures, timeouts and 5xx are retried with the shared backoff (`retry.ts`), up to `maxRetries`, for
 *   idempotent methods (RFC 9110 §9.2.2). A non-idempotent request (POST, PATCH) is retried only when the server
 *   cannot have acted on it: a connection that was never established, a 429, or a 503 with `Retry-After`;
 * - 429 waits `Retry-After` (1 s when absent); a wait longer than `maxRetryAfter` fails at once with RateLimitError,
 *   as do 429s that outlast the retries;
 * - 401 forces one token refresh (`forceRefresh(rejected)`) and one more round; a second 401 is AuthenticationError;
 * - a 5xx that outlasts the retries is returned as the response (the caller decides; `request` makes it ApiError).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as Headers from "@effect/platform/Headers"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  AuthenticationError,
  type ErrorPayload,
  RateLimitError,
  type TokenCacheError,
  TransportError
} from "../../ServiceError.js"
import { describeCause, maskJson, maskSecrets, safeCause } from "@service-sdk/shared/redact"
import { platformSpansOff } from "../safeSpans.js"
import { parseRetryAfter, Retryable, withRetries } from "../retry.js"
import { timeoutFail } from "./attemptTimeout.js"
import { apiErrorMessage, errorPayload } from "./body.js"
import { bufferedResponse, isRepresentable } from "./response.js"

export interface PolicyConfig {
  /** The API's base URL, without a trailing slash. */
  readonly apiUrl: string
  /** Per attempt. */
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

/** What the policy's `HttpClient` fails with. */
export type PolicyError = AuthenticationError | RateLimitError | TransportError | TokenCacheError

/** The wait for a 429 without `Retry-After`. */
export const DEFAULT_RETRY_AFTER = Duration.seconds(1)

/** RFC 9110 §9.2.2: repeating these has the effect of sending them once. */
export const isIdempotent = (method: string): boolean =>
  method === "GET" || method === "HEAD" || method === "PUT" || method === "DELETE" || method === "OPTIONS"

/** Failures that prove the request never left this machine: safe to send again whatever the method. */
const NOT_SENT = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|UND_ERR_CONNECT_TIMEOUT)\b/

const neverSent = (error: HttpClientError.HttpClientError): boolean => {
  let current: unknown = error.cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const { code, message } = current as { readonly code?: unknown; readonly message?: unknown }
    if ((typeof code === "string" && NOT_SENT.test(code)) || (typeof message === "string" && NOT_SENT.test(message))) {
      return true
    }
    current = (current as { readonly cause?: unknown }).cause
  }
  return false
}

/** A 5xx worth another attempt; when the retries run out, it is the answer. */
class ServerError {
  constructor(readonly answer: Answer<Body>) {}
}

/** A path or URL under `apiUrl`. URLs already under it are kept (paging's `next`); anything else is appended. */
export const resolveUrl = (apiUrl: string, url: string): string =>
  url === apiUrl || url.startsWith(`${apiUrl}/`) || url.startsWith(`${apiUrl}?`)
    ? url
    : `${apiUrl}${url.startsWith("/") ? "" : "/"}${url}`

type RetryableFailure = RateLimitError | TransportError | ServerError

/** What an attempt fails with: a final error, or one worth another attempt. */
type Attempted = RateLimitError | TransportError | Retryable<RetryableFailure>

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
) => Effect.Effect<B, HttpClientError.ResponseError>

// the platform decodes text straight from the received chunks (no copy into one buffer, no second decode)
const readText: Read<string> = (response) => response.text
const readBytes: Read<ArrayBuffer> = (response) => response.arrayBuffer

/** The policy: `send` for the SDK's own requests (no response object built), `http` for everyone else. */
export interface Policy {
  /** Sends a request (path or URL under `apiUrl`) through the policy; the answer is read in full. */
  readonly send: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<Answer<string>, PolicyError>
  /** The same, as an `HttpClient` whose responses hold the request without the token (`response.ts`). */
  readonly http: HttpClient.HttpClient.With<PolicyError>
}

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

const describe = (request: HttpClientRequest.HttpClientRequest) => `${request.method} ${request.url}`

/** An authenticated `HttpClient` under `config.apiUrl`, applying the policy above to every request. */
export const make = (config: PolicyConfig, tokens: TokenSource, httpClient: HttpClient.HttpClient): Policy => {
  const { maxRetryAfter, timeout } = config

  const transportFailure = (
    request: HttpClientRequest.HttpClientRequest,
    cause: HttpClientError.HttpClientError,
    token: Redacted.Redacted<string>
  ) => {
    // a client or proxy may quote the request it was sending: its bearer token is masked
    const secrets = [Redacted.value(token)]
    const error = new TransportError({
      message: `cannot reach the API (${describe(request)}): ${maskSecrets(describeCause(cause), secrets)}`,
      cause: safeCause(cause, secrets)
    })
    const retryable =
      cause._tag === "ResponseError" || cause.reason === "Transport"
        ? isIdempotent(request.method) || neverSent(cause)
        : false
    return Effect.fail(retryable ? new Retryable(error) : error)
  }

  /** The attempt's bound expired: before the answer's headers, or while its body was arriving. */
  const timedOut = (request: HttpClientRequest.HttpClientRequest, answered: boolean) => {
    const error = new TransportError({
      message: answered
        ? `the API's answer to ${describe(request)} did not arrive within ${Duration.format(timeout)}`
        : `the API did not answer ${describe(request)} within ${Duration.format(timeout)}`
    })
    return isIdempotent(request.method) ? new Retryable(error) : error
  }

  /** Decides on a 429 or 5xx answer: the answer itself, or a (retryable) failure. */
  const classify = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    response: Answer<B>
  ): Effect.Effect<Answer<B>, Attempted> =>
    Effect.gen(function* () {
      const status = response.status
      if (status === 429) {
        const retryAfter = Option.getOrElse(
          yield* parseRetryAfter(response.headers["retry-after"]),
          () => DEFAULT_RETRY_AFTER
        )
        if (Duration.greaterThan(retryAfter, maxRetryAfter)) {
          return yield* new RateLimitError({
            message: `the API is rate limiting requests (429 on ${describe(request)}) and asks to wait ${Duration.format(retryAfter)}, longer than maxRetryAfter (${Duration.format(maxRetryAfter)})`,
            retryAfter
          })
        }
        return yield* Effect.fail(
          new Retryable(
            new RateLimitError({
              message: `the API kept rate limiting requests (429 on ${describe(request)}) after every retry; retry after ${Duration.format(retryAfter)}`,
              retryAfter
            }),
            Option.some(retryAfter)
          )
        )
      }
      const retryAfter = status === 503 ? yield* parseRetryAfter(response.headers["retry-after"]) : Option.none()
      const retryable =
        (isIdempotent(request.method) || Option.isSome(retryAfter)) &&
        !Option.exists(retryAfter, (wait) => Duration.greaterThan(wait, maxRetryAfter))
      return retryable
        ? yield* Effect.fail(new Retryable(new ServerError(response as Answer<Body>), retryAfter))
        : response
    })

  /**
   * One attempt with `token`: the request, then its whole body, within `timeout` (past it the attempt is interrupted,
   * which aborts the request and frees its connection). Built anew for each run (`round` calls it when the token is
   * there).
   */
  const attempt = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    token: Redacted.Redacted<string>,
    read: Read<B>
  ): Effect.Effect<Answer<B>, Attempted> => {
    let answered = false
    return httpClient.execute(HttpClientRequest.bearerToken(request, token)).pipe(
      Effect.flatMap((response) => {
        answered = true
        return Effect.map(read(response), (body) => ({ response, body }))
      }),
      Effect.catchAll((cause) => transportFailure(request, cause, token)),
      // in the attempt's own fiber, the platform's span is off for good (`safeSpans.ts`: no scope per request)
      (self) => timeoutFail(self, timeout, () => timedOut(request, answered), platformSpansOff),
      Effect.flatMap(({ body, response }) => {
        const status = response.status
        if (!isRepresentable(status)) {
          return Effect.fail(
            new TransportError({ message: `the API answered ${describe(request)} with status ${status}`, status })
          )
        }
        const answer = new LazyAnswer(status, response, body, token)
        // most answers need no decision: only 429 and 5xx are looked at
        return status === 429 || status >= 500 ? classify(request, answer) : Effect.succeed(answer)
      }),
      Effect.tapError((failure) =>
        failure instanceof Retryable
          ? Effect.logDebug(
              `${describe(request)}: ${failure.error instanceof ServerError ? `answered ${failure.error.answer.status}` : failure.error.message}; may retry`
            )
          : Effect.void
      )
    )
  }

  /**
   * Attempts with retries; the token of the last attempt comes back with its response (for a 401). Most requests
   * need no retry, so the first attempt runs before any retry state is built; only its retryable failure enters
   * `withRetries`, replayed as that policy's own first failure, so the delays and attempts are exactly its own.
   */
  const round = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    token: Effect.Effect<Redacted.Redacted<string>, TokenFailure>,
    read: Read<B>
  ): Effect.Effect<Answer<B>, TokenFailure | RateLimitError | TransportError> => {
    const once = Effect.flatMap(token, (used) => attempt(request, used, read))
    return Effect.catchIf(
      once,
      (failure): failure is Retryable<RetryableFailure> => failure instanceof Retryable,
      (first) => {
        let replay: Retryable<RetryableFailure> | undefined = first
        const again = Effect.suspend(() => {
          const failure = replay
          replay = undefined
          return failure === undefined ? once : Effect.fail(failure)
        })
        // a 5xx that outlasts the retries is the answer; only the retries can end with one
        return Effect.catchIf(
          withRetries<Answer<B>, TokenFailure | RateLimitError | TransportError, RetryableFailure, never>(
            again,
            config.maxRetries
          ),
          (failure): failure is ServerError => failure instanceof ServerError,
          (failure) => Effect.succeed(failure.answer as Answer<B>)
        )
      }
    )
  }

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
      // RFC 6750 §3.1: a rejected bearer token is `invalid_token`; the API's own message is the description.
      payload: {
        error: "invalid_token",
        ...(detail !== undefined ? { error_description: detail } : {})
      } satisfies ErrorPayload
    })
  }

  /** A 401 answered to `first.token`: one forced refresh and one more round. */
  const unauthorized = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    first: Answer<B>,
    forceRefresh: ForceRefresh,
    read: Read<B>
  ) =>
    Effect.gen(function* () {
      yield* Effect.logDebug(`${describe(request)}: answered 401, forcing one token refresh`)
      const fresh = yield* forceRefresh(first.token)
      const second = yield* round(request, Effect.succeed(fresh), read)
      if (second.status !== 401) return second
      const used = [first.token, fresh, second.token]
      return yield* rejected(request, errorPayload(second.body), true, used)
    })

  // no generator on the way of an ordinary answer
  const execute = <B extends Body>(
    request: HttpClientRequest.HttpClientRequest,
    read: Read<B>
  ): Effect.Effect<Answer<B>, PolicyError> =>
    Effect.flatMap(round(request, tokens.getAccessToken, read), (first) => {
      if (first.status !== 401) return Effect.succeed(first)
      return tokens.forceRefresh === undefined
        ? Effect.fail(rejected(request, errorPayload(first.body), false, [first.token]))
        : unauthorized(request, first, tokens.forceRefresh, read)
    })

  const send = (request: HttpClientRequest.HttpClientRequest) =>
    execute(HttpClientRequest.setUrl(request, resolveUrl(config.apiUrl, request.url)), readText)

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

type ForceRefresh = NonNullable<TokenSource["forceRefresh"]>
