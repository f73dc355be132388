/**
 * The CLI as an Effect program (run by `../bin.ts`): the command line of `./commands.ts`, the help, and one
 * `error: …` line for every failure.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { commandHelps, ROOT_SUMMARY, rootCommand, rootNotes } from "./commands.js"
import { commandHelp, helpRequest, helpWidth, PROGRAM, rootHelp, VERSION } from "./help.js"
import { errorLines, muteParser, UsageError } from "./errors.js"
import { globalFlags } from "./globalFlags.js"
import { oneLine, plain, withTerminalOutput } from "./terminal.js"

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

/**
 * SDK and CLI log lines on stderr (stdout is for results: `token --reveal | pbcopy`), in the CLI's own style
 * (`warning: …`, `debug: …`, one line each, no control characters), never Effect's (`WARN (#19) …`).
 */
const stderrLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    const text = oneLine((Array.isArray(message) ? message : [message]).map(String).join(" "))
    const prefix =
      logLevel._tag === "Warning"
        ? "warning: "
        : logLevel._tag === "Error" || logLevel._tag === "Fatal"
          ? "error: "
          : logLevel._tag === "Info"
            ? ""
            : "debug: "
    process.stderr.write(`${prefix}${text}\n`)
  })
)

/** The closest of `candidates` to a mistyped `word` (an edit or two away, or a prefix of it), for "did you mean". */
export const closest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  const distance = (a: string, b: string) => {
    let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
    for (let i = 1; i <= a.length; i++) {
      const current = [i]
      for (let j = 1; j <= b.length; j++) {
        current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    return previous[b.length]!
  }
  if (word.length > 64) return undefined
  const scored = candidates
    .map((candidate) => ({ candidate, score: candidate.startsWith(word) ? 0 : distance(word, candidate) }))
    .filter(({ candidate, score }) => score <= Math.max(1, Math.min(2, Math.floor(candidate.length / 3))))
    .sort((a, b) => a.score - b.score)
  return scored[0]?.candidate
}

/** The `--flags` a command takes (from its help), for "did you mean" after an unknown one. */
const flagsOf = (command: string | undefined): ReadonlyArray<string> =>
  (commandHelps.find((entry) => entry.name === command)?.options ?? []).flatMap((option) =>
    [...option.usage.matchAll(/--[a-z][\w-]*/g)].map((match) => match[0])
  )

/** "did you mean" for an unknown flag the parser refused (`Received unknown argument: '--emulatr'`). */
const withFlagSuggestion = (error: unknown, command: string | undefined): unknown => {
  if (!ValidationError.isValidationError(error)) return error
  const text = plain(HelpDoc.toAnsiText(error.error)).trim()
  const unknown = /unknown argument: '(--[^'=\s]+)/i.exec(text)?.[1]
  if (unknown === undefined) return error
  const suggestion = closest(unknown, [...flagsOf(command), "--help", "--log-level"])
  return new UsageError(
    `unknown option ${unknown} for ${command ?? PROGRAM}${suggestion === undefined ? "" : `: did you mean ${suggestion}?`}`
  )
}

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
                `unknown command "${first}": ${(() => {
                  const names = commandHelps.map((entry) => entry.name)
                  const suggestion = closest(first, names)
                  return `${suggestion === undefined ? "" : `did you mean "${suggestion}"? `}use one of ${names.join(", ")}`
                })()}`
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
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Console.error(errorLines(withFlagSuggestion(Cause.squash(cause), command), command))
      )
    )
  }).pipe(withTerminalOutput, Effect.provide(stderrLogger), Effect.provide(NodeContext.layer))
