/**
 * The one bridge from Effect to plain Promises, shared by the Promise facade (`service-sdk/promise`), the emulator's
 * `start` and the Redis packages' `connect`: a failed Effect rejects (or throws) with the error it failed with — the
 * SDK's own error instance, never a `FiberFailure` — by one rule ({@link squash}).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { runPromise } from "@service-sdk/effect/bridge"
 * import { ConfigurationError } from "@service-sdk/effect"
 *
 * const answer: Promise<number> = runPromise(Effect.fail(new ConfigurationError({ message: "no" })))
 * answer.catch((error) => console.error(error instanceof ConfigurationError)) // true
 * ```
 *
 * @since 1.0.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"

/**
 * The error a rejected Promise carries: the first failure (the typed error itself), else the first defect, else an
 * interruption error.
 *
 * @since 1.0.0
 * @category running
 */
export const squash = (cause: Cause.Cause<unknown>): unknown => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return Cause.originalError(failure.value)
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return Cause.originalError(defect.value)
  return Cause.squash(cause)
}

/**
 * The value of a successful exit; throws the {@link squash}ed error of a failed one.
 *
 * @since 1.0.0
 * @category running
 */
export const getOrThrow = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  throw squash(exit.cause)
}

/**
 * Runs an Effect that needs nothing to a Promise that rejects with the {@link squash}ed error.
 *
 * @since 1.0.0
 * @category running
 */
export const runPromise = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then(getOrThrow)

/**
 * Runs an Effect that needs nothing synchronously, throwing the {@link squash}ed error.
 *
 * @since 1.0.0
 * @category running
 */
export const runSyncOrThrow = <A, E>(effect: Effect.Effect<A, E>): A => getOrThrow(Effect.runSyncExit(effect))

/**
 * What {@link startScoped} resolves to: the value, and `close()` that closes its scope (idempotent).
 *
 * @since 1.0.0
 * @category models
 */
export interface Started<A> {
  readonly value: A
  readonly close: () => Promise<void>
}

/**
 * Runs a scoped Effect (a server, a connection) in a scope of its own, for plain code: resolves to its value and a
 * `close()` that releases what it acquired; on failure the scope is closed first and the {@link squash}ed error
 * rejects.
 *
 * @since 1.0.0
 * @category running
 */
export const startScoped = async <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<Started<A>> => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.extend(effect, scope))
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(Scope.close(scope, exit))
    throw squash(exit.cause)
  }
  let closed: Promise<void> | undefined
  const close = (): Promise<void> => {
    closed ??= Effect.runPromise(Scope.close(scope, Exit.void))
    return closed
  }
  return { value: exit.value, close }
}
