/**
 * The CLI as an Effect program (run by `../bin.ts`): the command line of `./commands.ts`, the help, and one
 * `error: …` line for every failure.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { commandHelps, ROOT_SUMMARY, rootCommand, rootNotes } from "./commands.js"
import { commandHelp, helpRequest, helpWidth, PROGRAM, rootHelp, VERSION } from "./help.js"
import { errorLines, muteParser, UsageError } from "./errors.js"
import { globalFlags } from "./globalFlags.js"
import { colourEnabled, withTerminalOutput } from "./terminal.js"

/**
 * The CLI as an Effect of the process arguments (`process.argv`, node and script path included), without the help
 * (see {@link main}).
 *
 * @since 1.0.0
 */
export const cli = Command.run(rootCommand, { name: PROGRAM, version: VERSION })

/**
 * The help `argv` asks for (`--help`, `-h`, or no command), as text `width` columns wide; undefined when it asks
 * for none.
 *
 * @since 1.0.0
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

/** The command `args` names, for the next step after a bad argument. */
const commandOf = (args: ReadonlyArray<string>) => commandHelps.find((command) => args.includes(command.name))?.name

/** SDK and CLI log lines on stderr (stdout is for results: `token --reveal | pbcopy`), coloured on a terminal. */
const stderrLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.prettyLogger({ stderr: true, colors: colourEnabled(process.env, process.stderr.isTTY) })
)

/**
 * Runs the CLI; every failure becomes `error: …` on stderr (plus the next step when the message names none) and a
 * failed Effect (exit code 1). `--log-level <level>` and `-v` are read wherever they are.
 *
 * @since 1.0.0
 */
export const main = (argv: ReadonlyArray<string>): Effect.Effect<void, unknown> =>
  Effect.suspend((): Effect.Effect<void, unknown, NodeContext.NodeContext> => {
    const flags = globalFlags(argv.slice(2))
    const args = flags._tag === "Ok" ? flags.args : argv.slice(2)
    const command = commandOf(args)
    const first = args[0]
    const run: Effect.Effect<void, unknown, NodeContext.NodeContext> =
      flags._tag === "Invalid"
        ? Effect.fail(new UsageError(flags.message))
        : first !== undefined && !first.startsWith("-") && command === undefined
          ? Effect.fail(
              new UsageError(
                `unknown command "${first}": use one of ${commandHelps.map((entry) => entry.name).join(", ")}`
              )
            )
          : Effect.suspend(() => {
              const text = help([...argv.slice(0, 2), ...args], helpWidth(process.stdout))
              if (text !== undefined) return Console.log(text)
              const parsed = muteParser(cli([...argv.slice(0, 2), ...args]))
              return flags.logLevel === undefined ? parsed : Logger.withMinimumLogLevel(parsed, flags.logLevel)
            })
    return run.pipe(
      Effect.tapErrorCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.void : Console.error(errorLines(Cause.squash(cause), command))
      )
    )
  }).pipe(withTerminalOutput, Effect.provide(stderrLogger), Effect.provide(NodeContext.layer))
