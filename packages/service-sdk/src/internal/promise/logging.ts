/**
 * The facade's logging: every facade object logs through its own `logger` at or above its `logLevel`, never to
 * stdout (Effect's default logger writes logfmt lines with `console.log`).
 */
import * as Cause from "effect/Cause"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { ConfigurationError } from "../../ServiceError.js"

/**
 * The least severe level a facade object logs (`"none"`: nothing).
 *
 * @since 1.0.0
 */
export type LogLevelName = "none" | "error" | "warning" | "info" | "debug"

/**
 * Where a facade object's log lines go: one method per severity, each called with one line of text.
 *
 * @since 1.0.0
 */
export interface FacadeLogger {
  readonly error: (line: string) => void
  readonly warn: (line: string) => void
  readonly info: (line: string) => void
  readonly debug: (line: string) => void
}

const levels: Readonly<Record<LogLevelName, LogLevel.LogLevel>> = {
  none: LogLevel.None,
  error: LogLevel.Error,
  warning: LogLevel.Warning,
  info: LogLevel.Info,
  debug: LogLevel.Debug
}

/** `console`'s methods, all on stderr (`console.info`/`console.debug` would write to stdout). */
const stderrConsole: FacadeLogger = {
  error: (line) => console.error(line),
  warn: (line) => console.warn(line),
  info: (line) => console.error(line),
  debug: (line) => console.error(line)
}

const methodOf = (level: LogLevel.LogLevel): keyof FacadeLogger => {
  if (LogLevel.greaterThanEqual(level, LogLevel.Error)) return "error"
  if (LogLevel.greaterThanEqual(level, LogLevel.Warning)) return "warn"
  if (LogLevel.greaterThanEqual(level, LogLevel.Info)) return "info"
  return "debug"
}

const text = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((part) => (typeof part === "string" ? part : String(part)))
    .join(" ")

/** One line: `service-sdk WARN <message> key=value ...`, and the cause when there is one. */
const toLine = (options: Logger.Logger.Options<unknown>): string => {
  const annotations = [...options.annotations].map(([key, value]) => ` ${key}=${String(value)}`).join("")
  const cause = Cause.isEmpty(options.cause) ? "" : `\n${Cause.pretty(options.cause)}`
  return `service-sdk ${options.logLevel.label} ${text(options.message)}${annotations}${cause}`
}

const makeLogger = (target: FacadeLogger): Logger.Logger<unknown, void> =>
  Logger.make((options) => {
    target[methodOf(options.logLevel)](toLine(options))
  })

/** The logger layer of a facade object's runtime; throws ConfigurationError for a bad `logLevel` or `logger`. */
export const loggerLayer = (options: {
  readonly logLevel?: LogLevelName | undefined
  readonly logger?: FacadeLogger | undefined
}): Layer.Layer<never> => {
  const levelName = options.logLevel ?? "warning"
  if (!Object.hasOwn(levels, levelName)) {
    throw new ConfigurationError({
      message: `logLevel must be one of ${Object.keys(levels).join(", ")} (got ${JSON.stringify(String(levelName))})`
    })
  }
  const target = options.logger ?? stderrConsole
  const missing = (["error", "warn", "info", "debug"] as const).filter(
    (method) => typeof (target as Partial<FacadeLogger> | null)?.[method] !== "function"
  )
  if (missing.length > 0) {
    throw new ConfigurationError({
      message: `logger must have the methods error, warn, info and debug (missing ${missing.join(", ")})`
    })
  }
  return Layer.merge(
    Logger.replace(Logger.defaultLogger, makeLogger(target)),
    Logger.minimumLogLevel(levels[levelName])
  )
}
