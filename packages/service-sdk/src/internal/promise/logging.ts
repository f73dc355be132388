/**
 * The facade's logging: every facade object logs through its own `logger` at or above its `logLevel`, never to
 * stdout (Effect's default logger writes logfmt lines with `console.log`).
 */
import * as Cause from "effect/Cause"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import { ConfigurationError } from "../../ServiceError.js"
import { callLogger, readLoggerMethods } from "@service-sdk/shared/plainInput"

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

/**
 * A facade object's logging, resolved: the least severe level and the logger (each line handed to the user's method
 * once; what it throws, or a Promise it returns that rejects, is swallowed: logging never fails a call). Throws
 * ConfigurationError for a bad `logLevel` or `logger`.
 */
export interface Logging {
  readonly level: LogLevel.LogLevel
  readonly logger: Logger.Logger<unknown, void>
}

export const resolveLogging = (options: {
  readonly logLevel?: LogLevelName | undefined
  readonly logger?: FacadeLogger | undefined
}): Logging => {
  const levelName = options.logLevel ?? "warning"
  if (typeof levelName !== "string" || !Object.hasOwn(levels, levelName)) {
    throw new ConfigurationError({
      message: `logLevel must be one of ${Object.keys(levels).join(", ")} (got ${JSON.stringify(String(levelName))})`
    })
  }
  const read = readLoggerMethods(options.logger ?? stderrConsole, ["error", "warn", "info", "debug"] as const)
  if ("problem" in read) throw new ConfigurationError({ message: read.problem })
  const { methods } = read
  const logger = Logger.make((log: Logger.Logger.Options<unknown>) => {
    let line: string
    try {
      line = toLine(log)
    } catch {
      return
    }
    callLogger(methods[methodOf(log.logLevel)], line)
  })
  return { level: levels[levelName], logger }
}

/** The logger layer of a facade object's runtime; throws ConfigurationError for a bad `logLevel` or `logger`. */
export const loggerLayer = (
  options:
    | {
        readonly logLevel?: LogLevelName | undefined
        readonly logger?: FacadeLogger | undefined
      }
    | Logging
): Layer.Layer<never> => {
  const logging =
    "level" in options && "logger" in options && Logger.isLogger(options.logger)
      ? (options as Logging)
      : resolveLogging(options as never)
  return Layer.merge(Logger.replace(Logger.defaultLogger, logging.logger), Logger.minimumLogLevel(logging.level))
}

/**
 * `effect` logging to `logging`, whichever runtime runs it (a provider's own logging when an `AsyncServiceClient`
 * runs it as its `authProvider`).
 */
export const withLogging =
  (logging: Logging) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(
      Logger.withMinimumLogLevel(effect, logging.level),
      FiberRef.currentLoggers,
      HashSet.make(logging.logger)
    )
