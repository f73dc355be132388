/**
 * Effect's default clock and tracer (the defaults of the `Clock` and `Tracer` references), to tell whether a fiber
 * runs on them: the request path takes cheaper mechanisms there (a native timer, no span nobody can see) and
 * Effect's own everywhere else (`TestClock`, an installed tracer). Read on first use: nothing is evaluated at import.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

let live: { readonly clock: Clock.Clock; readonly tracer: Tracer.Tracer } | undefined

const liveOnes = () => {
  if (live === undefined) {
    const none = Context.empty()
    live = { clock: Context.get(none, Clock.Clock), tracer: Context.get(none, Tracer.Tracer) }
  }
  return live
}

/** A pause on the wall clock whatever clock the fiber has (for what other processes do in real time). */
export const sleepOnLiveClock = (millis: number): Effect.Effect<void> =>
  Effect.suspend(() => Effect.provideService(Effect.sleep(millis), Clock.Clock, liveOnes().clock))

/** Whether `fiber` runs on Effect's default clock (the wall clock; not `TestClock`, not a user's own). */
export const onLiveClock = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(Clock.Clock) === liveOnes().clock

/**
 * Whether spans made in `fiber` would reach anyone: tracing is on and a tracer other than Effect's default one
 * (which keeps its spans in memory and exports them nowhere) is installed.
 */
export const traces = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(References.TracerEnabled) && fiber.getRef(Tracer.Tracer) !== liveOnes().tracer

/**
 * `Effect.withSpan(name, options)`, skipped when no tracer is installed (see {@link traces}): the span would be
 * made, timed and dropped.
 */
export const withSpanWhenTraced =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => (traces(fiber) ? Effect.withSpan(self, name, options) : self))
