/**
 * Effect's default clock and tracer (`DefaultServices.liveServices`, a public module), to tell whether a fiber runs
 * on them: the request path takes cheaper mechanisms there (a native timer, no span nobody can see) and Effect's own
 * everywhere else (`TestClock`, an installed tracer). Read on first use: nothing is evaluated at import.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Tracer from "effect/Tracer"

let live: { readonly clock: Clock.Clock; readonly tracer: Tracer.Tracer } | undefined

const liveOnes = () => {
  if (live === undefined) {
    const services = DefaultServices.liveServices
    live = { clock: Context.get(services, Clock.Clock), tracer: Context.get(services, Tracer.Tracer) }
  }
  return live
}

/** Whether `clock` is Effect's default clock (the wall clock; not `TestClock`, not a user's own). */
export const isLiveClock = (clock: Clock.Clock): boolean => clock === liveOnes().clock

/** Whether `fiber` runs on Effect's default clock (read synchronously: no effect steps). */
export const onLiveClock = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  isLiveClock(Context.get(fiber.currentDefaultServices, Clock.Clock))

/**
 * Whether spans made in `fiber` would reach anyone: tracing is on and a tracer other than Effect's default one
 * (which records nothing anywhere) is installed. Read synchronously from the fiber's state.
 */
export const traces = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.getFiberRef(FiberRef.currentTracerEnabled) && fiber.currentTracer !== liveOnes().tracer

/**
 * `Effect.withSpan(name, options)`, skipped when no tracer is installed (see {@link traces}): the span would be
 * made, timed and dropped, at the cost of a stack capture and several fiber reads per call.
 */
export const withSpanWhenTraced =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) => (traces(fiber) ? Effect.withSpan(self, name, options) : self))
