/**
 * The per-attempt bound. `Effect.timeoutOrElse` races the attempt against a sleep in two forked fibers. On Effect's
 * live clock the attempt runs in one forked fiber instead, watched by an observer and bounded by a native timer;
 * past the bound it is interrupted (which aborts its request) and the caller gets `onTimeout()`. On any other clock
 * (`TestClock`, a user's own) it is `Effect.timeoutOrElse` itself, so tests that move time see exactly Effect's
 * semantics. (The Effect 3 line's `attemptTimeout.ts` is the same mechanism.)
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
  onTimeout: () => Effect.Effect<never, E2>
): Effect.Effect<A, E | E2, R> =>
  // a child fiber, started at once (no scheduler hop): an interrupted caller interrupts it
  Effect.flatMap(Effect.forkChild(self, { startImmediately: true }), (fiber) =>
    Effect.callback<A, E | E2>((resume) => {
      const timer = setTimeout(() => {
        stop()
        resume(Effect.andThen(Fiber.interrupt(fiber), onTimeout()))
      }, millis)
      const stop = fiber.addObserver((exit: Exit.Exit<A, E>) => {
        clearTimeout(timer)
        resume(exit)
      })
      // the caller was interrupted: the timer and the attempt go with it
      return Effect.suspend(() => {
        clearTimeout(timer)
        stop()
        return Fiber.interrupt(fiber)
      })
    })
  )

/** `Effect.timeoutOrElse(self, { duration, orElse })`, cheaper on the live clock (see above). */
export const timeoutOrElse = <A, E, E2, R>(
  self: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  orElse: () => Effect.Effect<never, E2>
): Effect.Effect<A, E | E2, R> =>
  Effect.withFiber((fiber) => {
    const millis = Duration.toMillis(duration)
    return onLiveClock(fiber) && millis <= MAX_TIMER_MILLIS
      ? nativeTimeout(self, millis, orElse)
      : Effect.timeoutOrElse(self, { duration, orElse })
  })
