/**
 * The flags that belong to no command: `--log-level <level>` (or `--log-level=<level>`) and `-v`/`--verbose` (debug),
 * accepted wherever users put them (before or after the command, before `--`). Taken out of the arguments before
 * `@effect/cli` parses them, so a bad level is an error that names the flag, not "Invalid subcommand".
 */
import * as LogLevel from "effect/LogLevel"

const LEVELS: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/** The names the help lists. */
export const LEVEL_NAMES = "debug, info, warning, error, none"

export type GlobalFlags =
  | { readonly _tag: "Ok"; readonly args: ReadonlyArray<string>; readonly logLevel: LogLevel.LogLevel | undefined }
  | { readonly _tag: "Invalid"; readonly message: string }

/** Splits the arguments (without node and the script) into the global flags and the rest. */
export const globalFlags = (args: ReadonlyArray<string>): GlobalFlags => {
  const rest: Array<string> = []
  let logLevel: LogLevel.LogLevel | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === "-v" || arg === "--verbose") {
      logLevel = LogLevel.Debug
      continue
    }
    if (arg === "--log-level" || arg.startsWith("--log-level=")) {
      const value = arg === "--log-level" ? args[++i] : arg.slice("--log-level=".length)
      const level = value === undefined ? undefined : LEVELS[value.toLowerCase()]
      if (level === undefined) {
        return {
          _tag: "Invalid",
          message:
            value === undefined
              ? `--log-level needs a level: one of ${LEVEL_NAMES}`
              : `--log-level must be one of ${LEVEL_NAMES}, not "${value}"`
        }
      }
      logLevel = level
      continue
    }
    rest.push(arg)
  }
  return { _tag: "Ok", args: rest, logLevel }
}
