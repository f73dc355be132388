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
import { commandHelps, ROOT_SUMMARY, rootCommand, rootNotes } from "./internal/commands.js"
import { commandHelp, helpRequest, helpWidth, PROGRAM, rootHelp, VERSION } from "./internal/help.js"
import { oneLine, withTerminalOutput } from "./internal/terminal.js"

/**
 * The CLI as an Effect of the process arguments (`process.argv`, node and script path included), without the help
 * (see {@link main}).
 *
 * @since 0.1.0
 */
export const cli = Command.run(rootCommand, { name: PROGRAM, version: VERSION })

/**
 * The help `argv` asks for (`--help`, `-h`, or no command), as text `width` columns wide; undefined when it asks
 * for none.
 *
 * @since 0.2.0
 */
export const help = (argv: ReadonlyArray<string>, width: number): string | undefined => {
  const request = helpRequest(
    argv.slice(2),
    commandHelps.map((command) => command.name)
  )
  if (request === undefined) return undefined
  const command = commandHelps.find((entry) => entry.name === request.command)
  return command === undefined ? rootHelp(ROOT_SUMMARY, commandHelps, rootNotes, width) : commandHelp(command, width)
}

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

/** The command `argv` names, for the hint after a bad argument. */
const commandOf = (argv: ReadonlyArray<string>) =>
  commandHelps.find((command) => argv.slice(2).includes(command.name))?.name

/**
 * Runs the CLI; every failure becomes one `error: …` line on stderr and a failed Effect (exit code 1).
 *
 * @since 0.1.0
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<void, unknown> =>
  Effect.suspend(() => {
    const text = help(argv, helpWidth(process.stdout))
    if (text !== undefined) return Console.log(text)
    return cli(argv).pipe(
      Effect.tapErrorCause((cause) => {
        const failure = Cause.squash(cause)
        // @effect/cli has printed what was wrong with the arguments: say where the right ones are
        if (ValidationError.isValidationError(failure)) {
          const command = commandOf(argv)
          return Console.error(
            `Run \`${PROGRAM}${command === undefined ? "" : ` ${command}`} --help\` to see the options.`
          )
        }
        if (Cause.isInterruptedOnly(cause)) return Effect.void
        // one line, without control characters: the text may come from a server or a callback
        return Console.error(`error: ${oneLine(describe(failure))}`)
      })
    )
  }).pipe(withTerminalOutput, Effect.provide(NodeContext.layer))
