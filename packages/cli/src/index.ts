/**
 * The `service-sdk` command line: `demo`, `token`, `login`, `whoami`, `emulator`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { rootCommand } from "./internal/commands.js"
import { oneLine, withTerminalOutput } from "./internal/terminal.js"

/**
 * The CLI as an Effect of the process arguments (`process.argv`, node and script path included).
 *
 * @since 0.1.0
 */
export const cli = Command.run(rootCommand, { name: "service-sdk", version: "0.1.0" })

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

/**
 * Runs the CLI; every failure becomes one `error: …` line on stderr and a failed Effect (exit code 1).
 *
 * @since 0.1.0
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<void, unknown> =>
  cli(argv).pipe(
    Effect.tapErrorCause((cause) => {
      const failure = Cause.squash(cause)
      // @effect/cli has already printed what was wrong with the arguments
      if (ValidationError.isValidationError(failure)) return Effect.void
      if (Cause.isInterruptedOnly(cause)) return Effect.void
      // one line, without control characters: the text may come from a server or a callback
      return Console.error(`error: ${oneLine(describe(failure))}`)
    }),
    withTerminalOutput,
    Effect.provide(NodeContext.layer)
  )
