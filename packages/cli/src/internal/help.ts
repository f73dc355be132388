/**
 * The CLI's help, rendered from the declared table of commands and options (`commands.ts`): one entry per option with
 * its default and environment variable, wrapped to the terminal's width (80 when piped). `@effect/cli` parses the
 * arguments; its own help repeats type boilerplate for every option, so the help text is ours (docs/decisions.md).
 */

/** What the help says about one option. */
export interface OptionHelp {
  /** e.g. `--port <n>` or `-h, --help` */
  readonly usage: string
  readonly description: string
  readonly default?: string | undefined
  readonly env?: string | undefined
}

/** What the help says about one command. */
export interface CommandHelp {
  readonly name: string
  /** one line, for the command list */
  readonly summary: string
  /** paragraphs after the usage line (default: the summary) */
  readonly description?: ReadonlyArray<string> | undefined
  readonly options: ReadonlyArray<OptionHelp>
  /** example lines, shown as is */
  readonly examples?: ReadonlyArray<string> | undefined
}

export const PROGRAM = "service-sdk"

/** A section heading, bold (plain when piped or with NO_COLOR: the CLI's output strips escape sequences then). */
const heading = (text: string) => `\u001b[1m${text}\u001b[0m`
export const VERSION = "1.0.0"

const helpOption: OptionHelp = { usage: "-h, --help", description: "show help for the command" }

/** The parser's own options, given before the command. */
export const globalOptions: ReadonlyArray<OptionHelp> = [
  helpOption,
  { usage: "--version", description: "print the version" },
  {
    usage: "--log-level <level>",
    description:
      "before or after the command: also print the SDK's log lines from this level up (debug, info, warning, error, none), on stderr"
  },
  { usage: "-v, --verbose", description: "the same as --log-level debug" }
]

/** Splits `text` into lines of at most `width` characters (a longer word gets a line of its own). */
export const wrap = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line === "") line = word
    else if (line.length + 1 + word.length <= width) line = `${line} ${word}`
    else {
      lines.push(line)
      line = word
    }
  }
  if (line !== "") lines.push(line)
  return lines
}

const describe = (option: OptionHelp): string =>
  [
    option.description,
    ...(option.default === undefined ? [] : [`(default: ${option.default})`]),
    ...(option.env === undefined ? [] : [`[env: ${option.env}]`])
  ].join(" ")

/**
 * Two columns: the term, then its description wrapped beside it; below it (indented) when the term is too wide, or
 * when a word of the description would not fit beside it.
 */
const definitions = (rows: ReadonlyArray<readonly [string, string]>, width: number): ReadonlyArray<string> => {
  const indent = 2
  const below = 6
  const termWidth = Math.min(Math.max(...rows.map(([term]) => term.length)), 26)
  const column = indent + termWidth + 2
  const out: Array<string> = []
  for (const [term, text] of rows) {
    const longest = Math.max(...text.split(/\s+/).map((word) => word.length))
    if (term.length > termWidth || width - column < Math.max(longest, 20)) {
      out.push(`${" ".repeat(indent)}${term}`)
      for (const line of wrap(text, width - below)) out.push(`${" ".repeat(below)}${line}`)
    } else {
      wrap(text, width - column).forEach((line, index) => {
        out.push(
          index === 0 ? `${" ".repeat(indent)}${term.padEnd(termWidth + 2)}${line}` : `${" ".repeat(column)}${line}`
        )
      })
    }
  }
  return out
}

const paragraphs = (texts: ReadonlyArray<string>, width: number) =>
  texts.flatMap((text, index) => [...(index === 0 ? [] : [""]), ...wrap(text, width)])

/** `service-sdk --help` */
export const rootHelp = (
  summary: string,
  commands: ReadonlyArray<CommandHelp>,
  notes: ReadonlyArray<string>,
  width: number
): string =>
  [
    `${PROGRAM} ${VERSION}: ${summary}`,
    "",
    heading("Usage:"),
    `  ${PROGRAM} <command> [options] [--log-level <level> | -v]`,
    "",
    heading("Commands:"),
    ...definitions(
      commands.map((command) => [command.name, command.summary] as const),
      width
    ),
    "",
    heading("Options:"),
    ...definitions(
      globalOptions.map((option) => [option.usage, describe(option)] as const),
      width
    ),
    "",
    ...paragraphs(notes, width),
    "",
    ...wrap(`Run \`${PROGRAM} <command> --help\` for a command's options.`, width)
  ].join("\n")

/** `service-sdk <command> --help` */
export const commandHelp = (command: CommandHelp, width: number): string =>
  [
    heading("Usage:"),
    `  ${PROGRAM} ${command.name}${command.options.length === 0 ? "" : " [options]"}`,
    "",
    ...paragraphs(command.description ?? [command.summary], width),
    "",
    heading("Options:"),
    ...definitions(
      [...command.options, helpOption].map((option) => [option.usage, describe(option)] as const),
      width
    ),
    ...(command.examples === undefined || command.examples.length === 0
      ? []
      : ["", heading("Examples:"), ...command.examples.map((line) => `  ${line}`)])
  ].join("\n")

/** The terminal's width, 80 when not a terminal; never narrower than 40. */
export const helpWidth = (stdout: { readonly isTTY?: boolean; readonly columns?: number }): number =>
  stdout.isTTY === true && typeof stdout.columns === "number" && stdout.columns > 0 ? Math.max(stdout.columns, 40) : 80

/**
 * The help `argv` asks for: `--help`/`-h` anywhere before `--` (or no arguments at all) → the command it names
 * (undefined for the root help); anything else → none (the parser runs).
 */
export const helpRequest = (
  args: ReadonlyArray<string>,
  commandNames: ReadonlyArray<string>
): { readonly command: string | undefined } | undefined => {
  const end = args.indexOf("--")
  const before = end === -1 ? args : args.slice(0, end)
  if (args.length > 0 && !before.some((arg) => arg === "--help" || arg === "-h")) return undefined
  const command = before.find((arg) => !arg.startsWith("-"))
  return { command: command !== undefined && commandNames.includes(command) ? command : undefined }
}
