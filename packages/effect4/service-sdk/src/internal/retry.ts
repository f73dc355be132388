/**
 * The one retry policy, shared by token-endpoint calls and data-API calls: up to `maxRetries` retries with the
 * backoff of `shared/backoff.ts` (jittered with the Effect `Random`, slept on the Effect `Clock`), or the server's
 * `Retry-After`.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import { backoffMillis, JITTER, parseRetryAfterMillis } from "@service-sdk/shared/backoff"

/** A failure worth another attempt; `retryAfter` is the server's `Retry-After`, when it sent one. */
export class Retryable<E> {
  readonly _tag = "Retryable"
  constructor(
    readonly error: E,
    readonly retryAfter: Duration.Duration | undefined = undefined
  ) {}
}

const isRetryable = (u: unknown): u is Retryable<unknown> => u instanceof Retryable

/** The delay before retry number `attempt + 1`: the server's wish, else the jittered backoff. */
const delayOf = (failure: Retryable<unknown>, attempt: number) =>
  failure.retryAfter !== undefined
    ? Effect.succeed(failure.retryAfter)
    : Effect.map(Random.nextBetween(JITTER.min, JITTER.max), (factor) =>
        Duration.millis(backoffMillis(attempt) * factor)
      )

/**
 * Runs `attempt`, retrying while it fails with {@link Retryable}; when retries run out the last retryable failure's
 * own error surfaces. Other failures surface at once.
 */
export const withRetries = <A, E, E2, R>(
  attempt: Effect.Effect<A, E | Retryable<E2>, R>,
  maxRetries: number
): Effect.Effect<A, E | E2, R> => {
  const loop = (n: number): Effect.Effect<A, E | E2, R> =>
    Effect.catchIf(
      attempt,
      (failure): failure is Retryable<E2> => isRetryable(failure),
      (failure) =>
        n >= maxRetries
          ? Effect.fail(failure.error)
          : Effect.andThen(
              Effect.flatMap(delayOf(failure, n), (delay) => Effect.sleep(delay)),
              Effect.suspend(() => loop(n + 1))
            )
    ) as Effect.Effect<A, E | E2, R>
  return loop(0)
}

/** `Retry-After` (seconds or an HTTP date, RFC 9110 §10.2.3) against the Effect `Clock`; anything else is undefined. */
export const parseRetryAfter = (header: string | undefined): Effect.Effect<Duration.Duration | undefined> =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const millis = parseRetryAfterMillis(header, now)
    return millis === undefined ? undefined : Duration.millis(millis)
  })
