/**
 * Runs the shared file protocol (`shared/fileOps.ts`: one implementation for both lines) on `node:fs` (this line's
 * core has no platform package, docs/decisions.md 26.5). Each file-system step runs to its end once started (an
 * interruption waits for it), time and pauses are Effect's (`Clock`, `sleep`: TestClock in tests), warnings go to the
 * fiber's logger, and an interrupted program still runs its `finally` blocks (its temp files removed).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ConfigurationError, TokenCacheError } from "../ServiceError.js"
import { FileFailure, type Op, type Program } from "@service-sdk/shared/fileOps"
import { checkPath as check, nodeOperation } from "@service-sdk/shared/fileSafety"
import { describeCause, safeCause } from "@service-sdk/shared/redact"

export type FileError = TokenCacheError | ConfigurationError

/** A program's failure as this line's error. */
export const toError = (error: unknown): FileError =>
  error instanceof FileFailure && error.kind === "config"
    ? new ConfigurationError({ message: error.message })
    : error instanceof FileFailure
      ? new TokenCacheError({
          message: error.message,
          ...(error.cause === undefined ? {} : { cause: safeCause(error.cause) })
        })
      : new TokenCacheError({ message: `token cache file: ${describeCause(error)}`, cause: safeCause(error) })

/** One step: the line's clock, sleep and logger, else `node:fs`. */
export const operation = (op: Op): Effect.Effect<unknown, unknown> => {
  switch (op._tag) {
    case "clock":
      return Clock.currentTimeMillis
    case "sleep":
      return Effect.interruptible(Effect.sleep(Duration.millis(op.millis)))
    case "warn":
      return Effect.logWarning(op.message)
    default:
      return Effect.uninterruptible(Effect.tryPromise({ try: () => nodeOperation(op), catch: (error) => error }))
  }
}

/** Runs a program of the shared file protocol (`perform`: how a step runs; the tests slow some down). */
export const run = <A>(
  program: () => Program<A>,
  perform: (op: Op) => Effect.Effect<unknown, unknown> = operation
): Effect.Effect<A, FileError> =>
  Effect.suspend(() => {
    const it = program()
    let ended = false
    const step = (resume: () => IteratorResult<unknown, A>): Effect.Effect<A, FileError> => {
      let result: IteratorResult<unknown, A>
      try {
        result = resume()
      } catch (error) {
        ended = true
        return Effect.fail(toError(error))
      }
      if (result.done === true) {
        ended = true
        return Effect.succeed(result.value)
      }
      return Effect.matchEffect(perform(result.value as Op), {
        onFailure: (error) => step(() => it.throw(error)),
        onSuccess: (value) => step(() => it.next(value))
      })
    }
    // interrupted at a step: the program's `finally` blocks run (uninterruptibly) before the fiber ends
    return Effect.onInterrupt(
      step(() => it.next()),
      () => (ended ? Effect.void : Effect.ignore(step(() => it.return(undefined as A))))
    )
  })

/** A cache path that names a place (not empty, not the root), else a ConfigurationError. */
export const checkedPath = (name: string, path: string, kind: "file" | "directory") =>
  Effect.try({ try: () => check(name, path, kind), catch: (error) => toError(error) as ConfigurationError })
