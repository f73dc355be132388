/**
 * One error format for every command: `error: <what went wrong>` on stderr, then the next step on a second line
 * when the message does not already name one. `@effect/cli` prints its own argument errors; while it parses, its
 * console is muted ({@link muteParser}) and the same format is printed from the error it fails with.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { PROGRAM } from "./help.js"
import { oneLine, plain } from "./terminal.js"

/** A bad argument the CLI itself found (a global flag). */
export class UsageError {
  readonly _tag = "UsageError"
  constructor(readonly message: string) {}
}

/** The console the command handlers write to, while the parser's is muted. */
const handlerConsole = FiberRef.unsafeMake<Console.Console | undefined>(undefined)

const muted = (base: Console.Console): Console.Console => ({
  ...base,
  error: () => Effect.void,
  unsafe: { ...base.unsafe, error: () => {} }
})

/** Runs `self` (the parser) with its console's `error` muted; {@link withHandlerConsole} restores it for a handler. */
export const muteParser = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((base) => self.pipe(Effect.withConsole(muted(base)), Effect.locally(handlerConsole, base)))

/** Runs a command's handler with the real console. */
export const withHandlerConsole = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(handlerConsole), (base) => (base === undefined ? self : Effect.withConsole(self, base)))

const describe = (error: unknown): string => {
  if (ValidationError.isValidationError(error)) return plain(HelpDoc.toAnsiText(error.error)).trim()
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

/** Does the message already say what to do (a command to run, an option to pass, a variable to set)? */
const saysWhatToDo = (message: string) => /`[^`]+`|\bpass --|\bset SERVICE_SDK_|\buse --/.test(message)

const tagOf = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined

/** The next step after `error` in `command` (undefined: the message says it). */
export const nextStep = (error: unknown, message: string, command: string | undefined): string | undefined => {
  const help = `Run \`${PROGRAM}${command === undefined ? "" : ` ${command}`} --help\` to see the options.`
  if (ValidationError.isValidationError(error) || error instanceof UsageError) return help
  if (saysWhatToDo(message)) return undefined
  switch (tagOf(error)) {
    case "TransportError":
      return `Check that the Service answers at that URL (--auth-url, --api-url); to try locally, run \`${PROGRAM} emulator\` in another terminal.`
    case "AuthenticationError":
      return command === "token"
        ? "Check the client id and secret (--client-id, --client-secret or SERVICE_SDK_CLIENT_ID, SERVICE_SDK_CLIENT_SECRET)."
        : `Run \`${PROGRAM} login\` to sign in again.`
    case "ApiError":
    case "RateLimitError":
      return `Run it again with \`--log-level debug\` to see each request.`
    case "TokenCacheError":
      return `Check the token file (--cache), or run \`${PROGRAM} logout\` and sign in again.`
    default:
      return help
  }
}

/** The lines printed for a failure: `error: …` (one line, no control characters) and the next step. */
export const errorLines = (error: unknown, command: string | undefined): string => {
  const message = oneLine(describe(error))
  const step = nextStep(error, message, command)
  return step === undefined ? `error: ${message}` : `error: ${message}\n${step}`
}
