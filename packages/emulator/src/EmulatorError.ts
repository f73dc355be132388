/**
 * @since 1.0.0
 */
import * as Data from "effect/Data"

/**
 * Invalid options, fault or config input, or the server could not start (e.g. the port is in use).
 *
 * @since 1.0.0
 * @category errors
 */
export class EmulatorError extends Data.TaggedError("EmulatorError")<{
  readonly message: string
  readonly cause?: unknown
}> {}
