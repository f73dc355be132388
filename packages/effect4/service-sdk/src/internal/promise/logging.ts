/**
 * The facade's logging: every facade object logs through its own `logger` at or above its `logLevel`, never to
 * stdout (Effect's default logger writes with `console.log`). A logger that throws never fails a call: each line is
 * handed to it once, and what it throws is swallowed (`shared/plainInput.ts`).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import { ConfigurationError } from "../../ServiceError.js"
import { callLogger, readLoggerMethods } from "@service-sdk/shared/plainInput"

/**
 * The least severe level a facade object logs (`"none"`: nothing).
 *
 * @since 2.0.0
 */
export type LogLevelName = "none" | "error" | "warning" | "info" | "debug"

/**
 * Where a facade object's log lines go: one method per severity, each called with one line of text.
 *
 * @since 2.0.0
 */
export interface FacadeLogger {
  readonly error: (line: string) => void
  readonly warn: (line: string) => void
  readonly info: (line: string) => void
  readonly debug: (line: string) => void
}

const levels: Readonly<Record<LogLevelName, LogLevel.LogLevel>> = {
  none: "None",
  error: "Error",
  warning: "Warn",
  info: "Info",
  debug: "Debug"
}

/** `console`'s methods, all on stderr (`console.info`/`console.debug` would write to stdout). */
const stderrConsole: FacadeLogger = {
  error: (line) => console.error(line),
  warn: (line) => console.warn(line),
  info: (line) => console.error(line),
  debug: (line) => console.error(line)
}

const methodOf = (level: LogLevel.LogLevel): keyof FacadeLogger => {
  switch (level) {
    case "Fatal":
    case "Error":
      return "error"
    case "Warn":
      return "warn"
    case "Info":
      return "info"
    default:
      return "debug"
  }
}

const text = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((part) => (typeof part === "string" ? part : String(part)))
    .join(" ")

/** One line: `service-sdk WARN <message> key=value ...`, and the cause when there is one. */
const toLine = (options: Logger.Options<unknown>): string => {
  const annotations = Object.entries(options.fiber.getRef(References.CurrentLogAnnotations))
    .map(([key, value]) => ` ${key}=${String(value)}`)
    .join("")
  const cause = options.cause.reasons.length === 0 ? "" : `\n${Cause.pretty(options.cause)}`
  return `service-sdk ${options.logLevel.toUpperCase()} ${text(options.message)}${annotations}${cause}`
}

/**
 * A facade object's logging, resolved: the least severe level and the logger. Throws ConfigurationError for a bad
 * `logLevel` or `logger`.
 */
export interface Logging {
  readonly level: LogLevel.LogLevel
  readonly loggers: ReadonlySet<Logger.Logger<unknown, void>>
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
  const logger = Logger.make((log: Logger.Options<unknown>) => {
    let line: string
    try {
      line = toLine(log)
    } catch {
      return
    }
    callLogger(methods[methodOf(log.logLevel)], line)
  })
  return { level: levels[levelName], loggers: new Set([logger]) }
}

/** The logger layer of a facade object's runtime. */
export const loggingLayer = (logging: Logging): Layer.Layer<never> =>
  Layer.merge(
    Layer.succeed(References.MinimumLogLevel, logging.level),
    Layer.succeed(Logger.CurrentLoggers, logging.loggers)
  ) as Layer.Layer<never>

/**
 * `effect` logging to `logging`, whichever runtime runs it (a provider's own logging when an `AsyncServiceClient`
 * runs it as its `authProvider`).
 */
export const withLogging =
  (logging: Logging) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.provideService(References.MinimumLogLevel, logging.level),
      Effect.provideService(Logger.CurrentLoggers, logging.loggers)
    )
