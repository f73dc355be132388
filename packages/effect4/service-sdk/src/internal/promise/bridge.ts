/**
 * From Effect to plain Promises, for the facade: a failed Effect rejects (or throws) with the error it failed with —
 * the SDK's own error instance, never a wrapper — by one rule ({@link squash}), and the error's stack ends with the
 * frames of the plain caller's own call ({@link withCallSite}): a fiber's stack holds only the runtime's frames.
 */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"

/** The error a rejected Promise carries: the first failure, else the first defect, else Effect's own squash. */
export const squash = (cause: Cause.Cause<unknown>): unknown => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) return failure.value
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) return defect.success
  return Cause.squash(cause)
}

/** Errors whose stack already carries a caller's frames (an outcome shared by many callers is marked once). */
const marked = new WeakSet<object>()

/** The stack of a call into the facade, read where the caller called (only formatted if an error needs it). */
export type CallSite = { readonly stack?: string | undefined }

export const callSite = (at: (...args: Array<any>) => unknown): CallSite => {
  const site: { stack?: string } = {}
  Error.captureStackTrace(site, at)
  return site
}

/**
 * `error` with the frames of `site` appended to its stack, under a line that says so: the stack then shows the
 * user's own call (the fiber that failed has none of its frames).
 */
export const withCallSite = (error: unknown, site: CallSite | undefined): unknown => {
  if (site === undefined || !(error instanceof Error) || marked.has(error)) return error
  try {
    const frames = String(site.stack ?? "")
      .split("\n")
      .filter((line) => line.trimStart().startsWith("at "))
    if (frames.length === 0) return error
    marked.add(error)
    const own = String(error.stack ?? `${error.name}: ${error.message}`)
    Object.defineProperty(error, "stack", {
      value: `${own}\n    at (the call into service-sdk)\n${frames.join("\n")}`,
      configurable: true,
      writable: true,
      enumerable: false
    })
  } catch {
    // a stack that cannot be written stays as it was
  }
  return error
}

/** The value of a successful exit; throws the {@link squash}ed error of a failed one. */
export const getOrThrow = <A, E>(exit: Exit.Exit<A, E>, site?: CallSite): A => {
  if (Exit.isSuccess(exit)) return exit.value
  throw withCallSite(squash(exit.cause), site)
}
