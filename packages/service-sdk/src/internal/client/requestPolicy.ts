/**
 * The client's request policy for data API calls, in one place. Every data API request goes
 * through {@link make}:
 *
 * - the bearer token is asked of the provider on every attempt; a token failure surfaces as is and is never retried
 *   here (the provider already retried its own endpoint: no nested retry storms);
 * - each attempt (headers and body) is bounded by `timeout`, through its abort signal (`attemptBound.ts`);
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
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Redacted from "effect/Redacted"
import {
  AuthenticationError,
  type ErrorPayload,
  RateLimitError,
  type TokenCacheError,
  TransportError
} from "../../ServiceError.js"
import { describeCause, maskJson, safeCause } from "../redact.js"
import { parseRetryAfter, Retryable, withRetries } from "../retry.js"
import * as AttemptBound from "./attemptBound.js"
import { type Bound, isAttemptTimeout, isConnected } from "./attemptBound.js"
import { apiErrorMessage, errorPayload } from "./body.js"
import { bufferedResponse, sanitizedResponse } from "./sanitizedResponse.js"

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

/** The largest delay a JS timer takes; the live clock treats longer sleeps as endless. */
const MAX_TIMER_MILLIS = 2 ** 31 - 1
const liveClock = Clock.make()

/**
 * The fallback bound, used only when `@effect/platform`'s registry is missing (`attemptBound.ts`):
 * `Effect.timeoutFail`, cheaper on the live clock. `Effect.timeoutFail` races two forked fibers (the effect and a
 * sleep) and costs tens of µs per attempt, as much as the request itself on a fast API. On the live clock this runs
 * the effect in one fiber of its own and bounds it with a plain timer, which is what the live clock's `sleep` does;
 * on any other clock (`TestClock`) it is `Effect.timeoutFail` itself. Either way: past `duration` the effect is
 * interrupted and `onTimeout()` is the failure; interrupting the caller interrupts the effect.
 */
const withTimeout =
  <E2>(duration: Duration.Duration, onTimeout: () => E2) =>
  <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | E2> =>
    Effect.clockWith((clock) => {
      const millis = Duration.toMillis(duration)
      if (clock.constructor !== liveClock.constructor || millis > MAX_TIMER_MILLIS) {
        return Effect.timeoutFail(self, { duration, onTimeout })
      }
      return Effect.flatMap(Effect.runtime<never>(), (runtime) =>
        Effect.async<A, E | E2>((resume) => {
          const fiber = Runtime.runFork(runtime)(self)
          let expired = false
          const timer = setTimeout(() => {
            expired = true
            fiber.unsafeInterruptAsFork(fiber.id())
          }, millis)
          fiber.addObserver((exit) => {
            clearTimeout(timer)
            resume(expired && Exit.isInterrupted(exit) ? Effect.fail(onTimeout()) : exit)
          })
          return Effect.suspend(() => {
            clearTimeout(timer)
            return Fiber.interrupt(fiber)
          })
        })
      )
    })

/** A 5xx worth another attempt; when the retries run out, its (buffered) response is the answer. */
class ServerError {
  constructor(readonly response: HttpClientResponse.HttpClientResponse) {}
}

/** A path or URL under `apiUrl`. URLs already under it are kept (paging's `next`); anything else is appended. */
export const resolveUrl = (apiUrl: string, url: string): string =>
  url === apiUrl || url.startsWith(`${apiUrl}/`) || url.startsWith(`${apiUrl}?`)
    ? url
    : `${apiUrl}${url.startsWith("/") ? "" : "/"}${url}`

type RetryableFailure = RateLimitError | TransportError | ServerError

/** What an attempt fails with: a final error, or one worth another attempt. */
type Attempted = RateLimitError | TransportError | Retryable<RetryableFailure>

/** A response and the token it was sent with (none for a 5xx that ran out of retries). */
interface Answer {
  readonly response: HttpClientResponse.HttpClientResponse
  readonly used: Redacted.Redacted<string> | undefined
}

const describe = (request: HttpClientRequest.HttpClientRequest) => `${request.method} ${request.url}`

/** An authenticated `HttpClient` under `config.apiUrl`, applying the policy above to every request. */
export const make = (
  config: PolicyConfig,
  tokens: TokenSource,
  httpClient: HttpClient.HttpClient,
  /** "timer": the fallback bound (forked timer), as when the platform's registry is not reached; for tests. */
  bound: "signal" | "timer" = isConnected() ? "signal" : "timer"
): HttpClient.HttpClient.With<PolicyError> => {
  const { maxRetryAfter, timeout } = config
  const connected = bound === "signal"
  // the attempt's bound covers the body already, unless the platform's registry is missing (`attemptBound.ts`)
  const bodyTimeout = connected ? undefined : timeout

  const transportFailure = (request: HttpClientRequest.HttpClientRequest, cause: HttpClientError.HttpClientError) => {
    const error = new TransportError({
      message: `cannot reach the API (${describe(request)}): ${describeCause(cause)}`,
      cause: safeCause(cause)
    })
    const retryable =
      cause._tag === "ResponseError" || cause.reason === "Transport"
        ? isIdempotent(request.method) || neverSent(cause)
        : false
    return Effect.fail(retryable ? new Retryable(error) : error)
  }

  const timedOut = (request: HttpClientRequest.HttpClientRequest) => {
    const error = new TransportError({
      message: `the API did not answer ${describe(request)} within ${Duration.format(timeout)}`
    })
    return isIdempotent(request.method) ? new Retryable(error) : error
  }

  /** Decides on one answer: the response itself, or a (retryable) failure. */
  const classify = (request: HttpClientRequest.HttpClientRequest, response: HttpClientResponse.HttpClientResponse) =>
    Effect.gen(function* () {
      const status = response.status
      if (status === 429) {
        const retryAfter = Option.getOrElse(
          yield* parseRetryAfter(response.headers["retry-after"]),
          () => DEFAULT_RETRY_AFTER
        )
        yield* Effect.ignore(response.arrayBuffer)
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
      if (status >= 500) {
        const retryAfter = status === 503 ? yield* parseRetryAfter(response.headers["retry-after"]) : Option.none()
        const retryable =
          (isIdempotent(request.method) || Option.isSome(retryAfter)) &&
          !Option.exists(retryAfter, (wait) => Duration.greaterThan(wait, maxRetryAfter))
        if (!retryable) return response
        const body = yield* Effect.catchAll(response.arrayBuffer, (error) =>
          isAttemptTimeout(error) ? Effect.fail(timedOut(request)) : Effect.succeed(new ArrayBuffer(0))
        )
        const buffered = bufferedResponse(request, status, response.headers, body, response)
        return yield* Effect.fail(new Retryable(new ServerError(buffered), retryAfter))
      }
      return response
    })

  /** Sends `request` with its token and decides on the answer; `bound` (when given) ends the exchange in time. */
  const send = (
    request: HttpClientRequest.HttpClientRequest,
    sent: HttpClientRequest.HttpClientRequest,
    bound: Bound | undefined
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, Attempted> =>
    httpClient.execute(sent).pipe(
      Effect.catchAll((cause) =>
        bound?.expired === true ? Effect.fail(timedOut(request)) : transportFailure(request, cause)
      ),
      Effect.flatMap((response) => {
        const answer = sanitizedResponse(response, request, bound, timeout)
        // most answers need no decision: only 429 and 5xx are looked at
        return answer.status === 429 || answer.status >= 500 ? classify(request, answer) : Effect.succeed(answer)
      })
    )

  /**
   * One attempt with `token`, bounded by `timeout` through the request's abort signal (`attemptBound.ts`): a timer
   * aborts it, and so do its failure and its interruption; a response keeps its bound until its body is read.
   */
  const attempt = (
    request: HttpClientRequest.HttpClientRequest,
    token: Redacted.Redacted<string>
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, Attempted> => {
    const sent = HttpClientRequest.bearerToken(request, token)
    const bounded = connected
      ? Effect.flatMap(AttemptBound.arm(sent, timeout), (bound) =>
          Effect.onError(send(request, sent, bound), () => Effect.sync(() => bound.abort()))
        )
      : withTimeout(timeout, () => timedOut(request))(send(request, sent, undefined))
    return Effect.tapError(bounded, (failure) =>
      failure instanceof Retryable
        ? Effect.logDebug(
            `${describe(request)}: ${failure.error instanceof ServerError ? `answered ${failure.error.response.status}` : failure.error.message}; may retry`
          )
        : Effect.void
    )
  }

  /**
   * Attempts with retries; the token of the last attempt comes back with its response (for a 401). Most requests
   * need no retry, so the first attempt runs before any retry state is built; only its retryable failure enters
   * `withRetries`, replayed as that policy's own first failure, so the delays and attempts are exactly its own.
   */
  const round = (
    request: HttpClientRequest.HttpClientRequest,
    token: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  ) => {
    const once = Effect.flatMap(token, (used) => Effect.map(attempt(request, used), (response) => ({ response, used })))
    return once.pipe(
      Effect.catchIf(
        (failure): failure is Retryable<RetryableFailure> => failure instanceof Retryable,
        (first) => {
          let replay: Retryable<RetryableFailure> | undefined = first
          const again = Effect.suspend(() => {
            const failure = replay
            replay = undefined
            return failure === undefined ? once : Effect.fail(failure)
          })
          return withRetries<Answer, TokenFailure | RateLimitError | TransportError, RetryableFailure, never>(
            again,
            config.maxRetries
          )
        }
      ),
      Effect.catchIf(
        (failure): failure is ServerError => failure instanceof ServerError,
        (failure) => Effect.succeed({ response: failure.response, used: undefined })
      )
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

  /** A 401 answered with `first.used`: one forced refresh and one more round. */
  const unauthorized = (
    request: HttpClientRequest.HttpClientRequest,
    first: Answer & { readonly used: Redacted.Redacted<string> }
  ) =>
    Effect.gen(function* () {
      const payload = yield* errorPayload(first.response, bodyTimeout)
      if (tokens.forceRefresh === undefined) return yield* rejected(request, payload, false, [first.used])
      yield* Effect.logDebug(`${describe(request)}: answered 401, forcing one token refresh`)
      const fresh = yield* tokens.forceRefresh(first.used)
      const second = yield* round(request, Effect.succeed(fresh))
      if (second.response.status !== 401) return second.response
      const used = second.used === undefined ? [first.used, fresh] : [first.used, fresh, second.used]
      return yield* rejected(request, yield* errorPayload(second.response, bodyTimeout), true, used)
    })

  // no generator on the way of an ordinary answer
  const execute = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.flatMap(round(request, tokens.getAccessToken), (first) =>
      first.response.status !== 401 || first.used === undefined
        ? Effect.succeed(first.response)
        : unauthorized(request, { response: first.response, used: first.used })
    )

  return HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest>) => Effect.flatMap(request, execute),
    (request) => Effect.succeed(HttpClientRequest.setUrl(request, resolveUrl(config.apiUrl, request.url)))
  )
}
