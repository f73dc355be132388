/**
 * The per-attempt bound. `Effect.timeoutFail` races the attempt against a sleep in two forked fibers and joins the
 * winner: about half the cost of a request to a local server. On Effect's live clock the attempt runs in one forked
 * fiber instead, watched by an observer and bounded by a native timer; past the bound it is interrupted (which
 * aborts its request) and the caller gets `onTimeout()`. On any other clock (`TestClock`, a user's own) it is
 * `Effect.timeoutFail` itself, so tests that move time see exactly Effect's semantics. `ownFiber` runs first in
 * the attempt's own fiber when it has one (what must not reach the caller's fiber).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { onLiveClock } from "../liveServices.js"

/** Longer than this, `setTimeout` fires at once (a signed 32-bit delay). */
const MAX_TIMER_MILLIS = 2 ** 31 - 1

const nativeTimeout = <A, E, E2, R>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => E2,
  ownFiber: Effect.Effect<void>
): Effect.Effect<A, E | E2, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(Effect.zipRight(ownFiber, restore(self))), (fiber) =>
      restore(
        Effect.async<A, E | E2>((resume) => {
          const observer = (exit: Exit.Exit<A, E>) => {
            clearTimeout(timer)
            resume(exit)
          }
          const timer = setTimeout(() => {
            fiber.removeObserver(observer)
            resume(Effect.zipRight(Fiber.interrupt(fiber), Effect.fail(onTimeout())))
          }, millis)
          fiber.addObserver(observer)
          // the caller was interrupted: the timer and the attempt go with it
          return Effect.suspend(() => {
            clearTimeout(timer)
            fiber.removeObserver(observer)
            return Fiber.interrupt(fiber)
          })
        })
      )
    )
  )

/** `Effect.timeoutFail(self, { duration, onTimeout })`, cheaper on the live clock (see above). */
export const timeoutFail = <A, E, E2, R>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  onTimeout: () => E2,
  ownFiber: Effect.Effect<void> = Effect.void
): Effect.Effect<A, E | E2, R> =>
  Effect.withFiberRuntime((fiber) => {
    const millis = Duration.toMillis(duration)
    return onLiveClock(fiber) && millis <= MAX_TIMER_MILLIS
      ? nativeTimeout(self, millis, onTimeout, ownFiber)
      : Effect.timeoutFail(self, { duration, onTimeout })
  })
