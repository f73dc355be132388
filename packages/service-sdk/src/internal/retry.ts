/**
 * The one retry policy, shared by token-endpoint calls and data-API calls: up to `maxRetries` retries with the
 * backoff of `shared/backoff.ts` (0.5 s × 2^attempt, capped at 8 s, jittered to 50–100 % with the Effect `Random`),
 * or the server's `Retry-After` (read by `shared/backoff.ts` against the Effect `Clock`).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import { backoffMillis, JITTER, parseRetryAfterMillis } from "@service-sdk/shared/backoff"

/** A failure worth another attempt; `retryAfter` is the server's `Retry-After`, when it sent one. */
export class Retryable<E> {
  readonly _tag = "Retryable"
  constructor(
    readonly error: E,
    readonly retryAfter: Option.Option<Duration.Duration> = Option.none()
  ) {}
}

const isRetryable = (u: unknown): u is Retryable<unknown> => u instanceof Retryable

/** The un-jittered delay before retry number `attempt + 1`. */
export const backoff = (attempt: number): Duration.Duration => Duration.millis(backoffMillis(attempt))

const retrySchedule = (maxRetries: number) =>
  Schedule.intersect(Schedule.identity<unknown>(), Schedule.recurs(maxRetries)).pipe(
    Schedule.modifyDelayEffect(([failure, attempt]) =>
      isRetryable(failure) && Option.isSome(failure.retryAfter)
        ? Effect.succeed(failure.retryAfter.value)
        : Effect.map(Random.nextRange(JITTER.min, JITTER.max), (factor) => Duration.times(backoff(attempt), factor))
    )
  )

/**
 * Runs `attempt`, retrying while it fails with {@link Retryable}; when retries run out the last retryable failure's
 * own error surfaces. Other failures surface at once.
 */
export const withRetries = <A, E, E2, R>(
  attempt: Effect.Effect<A, E | Retryable<E2>, R>,
  maxRetries: number
): Effect.Effect<A, E | E2, R> =>
  Effect.retry(attempt, { schedule: retrySchedule(maxRetries), while: isRetryable }).pipe(
    Effect.mapError((failure) => (isRetryable(failure) ? (failure.error as E2) : (failure as E)))
  )

/** `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §10.2.3), against the Effect `Clock`; else none. */
export const parseRetryAfter = (header: string | undefined): Effect.Effect<Option.Option<Duration.Duration>> =>
  header === undefined
    ? Effect.succeed(Option.none())
    : Effect.map(Clock.currentTimeMillis, (now) =>
        Option.map(Option.fromNullable(parseRetryAfterMillis(header, now)), Duration.millis)
      )
