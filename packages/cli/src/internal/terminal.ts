/**
 * What the CLI writes to a terminal. Text that comes from a server or a callback (error descriptions, profile
 * fields) is printed without control characters: an ESC byte lets a page or server move the cursor, rewrite the
 * screen or retitle the window. Colour (the help's ANSI codes) only for a terminal, and never with `NO_COLOR`.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { cleanUntrustedText } from "@service-sdk/effect"

/** C0 controls but tab and newline, DEL, C1 controls, and bidirectional overrides (they reorder what is shown). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** `text` without control characters (tab and newline kept). */
export const stripControl = (text: string): string => text.replace(CONTROL, "")

/** The longest line the CLI prints from a message that may hold server-supplied text. */
const MAX_LINE = 4096

/**
 * `text` on one line, through the SDK's one cleaner for server-supplied text: no escape sequences, no control, bidi
 * or invisible characters (U+200B, U+2028/2029, U+200F, U+061C, U+FEFF, U+2060…), capped.
 */
export const oneLine = (text: string): string => cleanUntrustedText(text.replace(/[\r\n\t]+/g, " "), MAX_LINE)

/** ANSI escape sequences (CSI and OSC), for plain output. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g

/** Plain text: no escape sequences, no control characters. */
export const plain = (text: string): string => stripControl(text.replace(ANSI, ""))

/** Colour only on a terminal, and not when `NO_COLOR` is set to anything (https://no-color.org). */
export const colourEnabled = (env: Readonly<Record<string, string | undefined>>, isTTY: boolean | undefined): boolean =>
  isTTY === true && (env.NO_COLOR ?? "") === ""

const mapArgs = (args: ReadonlyArray<unknown>) => args.map((arg) => (typeof arg === "string" ? plain(arg) : arg))

/** `base` writing plain text (for pipes, files and `NO_COLOR`). */
export const plainConsole = (base: Console.Console): Console.Console => ({
  ...base,
  log: (...args) => base.log(...mapArgs(args)),
  error: (...args) => base.error(...mapArgs(args)),
  info: (...args) => base.info(...mapArgs(args)),
  warn: (...args) => base.warn(...mapArgs(args)),
  unsafe: {
    ...base.unsafe,
    log: (...args) => base.unsafe.log(...mapArgs(args)),
    error: (...args) => base.unsafe.error(...mapArgs(args)),
    info: (...args) => base.unsafe.info(...mapArgs(args)),
    warn: (...args) => base.unsafe.warn(...mapArgs(args))
  }
})

/** Runs `self` with plain output unless stdout is a terminal that may have colour. */
export const withTerminalOutput = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  colourEnabled(process.env, process.stdout.isTTY)
    ? self
    : Console.consoleWith((base) => Effect.withConsole(self, plainConsole(base)))

/** The exit code for a signal that ended the process (128 + its number: SIGINT 130, SIGTERM 143). */
export const signalExitCode = (signal: "SIGINT" | "SIGTERM"): number => (signal === "SIGINT" ? 130 : 143)
