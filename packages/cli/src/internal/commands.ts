/**
 * The commands of `service-sdk` (demo, token, login, whoami, logout, emulator): one table that declares each command's
 * options for the parser (`@effect/cli`) and for the help (`help.ts`). What they do is in `handlers.ts`, loaded when
 * a command runs.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { withHandlerConsole } from "./errors.js"
import { type CommandHelp, PROGRAM } from "./help.js"
import {
  cacheFlag,
  configOf,
  DEFAULT_EMULATOR_PORT,
  DEFAULT_LOGIN_SCOPE,
  flag,
  helpOf,
  publicClientFlag,
  targetFlags,
  wholeNumber
} from "./options.js"
import type { TargetFlags } from "./target.js"

/** The handlers load on first use, so `--help` and argument errors load only the command line itself. */
const lazy = <A, E, R>(f: (handlers: typeof import("./handlers.js")) => Effect.Effect<A, E, R>) =>
  withHandlerConsole(
    Effect.flatMap(
      Effect.promise(() => import("./handlers.js")),
      f
    )
  )

const scopeFlag = flag(Options.text("scope").pipe(Options.optional), {
  usage: "--scope <scopes>",
  description: "the scopes to ask for, space- or comma-separated",
  default: "none (the app's own)"
})

/** `token`'s options */
export const tokenFlags = {
  ...targetFlags,
  scope: scopeFlag,
  json: flag(Options.boolean("json"), {
    usage: "--json",
    description: "print JSON (the token masked unless --reveal)"
  }),
  reveal: flag(Options.boolean("reveal"), {
    usage: "--reveal",
    description: "print the whole token, alone on its line, for piping"
  }),
  user: flag(Options.boolean("user"), {
    usage: "--user",
    description: "the signed-in user's token (the saved login's, renewed as needed) instead of an app token"
  }),
  cache: cacheFlag
}

/** `login`'s options */
export const loginFlags = {
  ...targetFlags,
  scope: flag(Options.text("scope").pipe(Options.withDefault(DEFAULT_LOGIN_SCOPE)), {
    usage: "--scope <scopes>",
    description: "the scopes to ask for, space- or comma-separated",
    default: DEFAULT_LOGIN_SCOPE
  }),
  noBrowser: flag(Options.boolean("no-browser"), {
    usage: "--no-browser",
    description: "print the consent page's URL instead of opening a browser"
  }),
  port: flag(wholeNumber("port", 1, 65_535).pipe(Options.optional), {
    usage: "--port <n>",
    description:
      "the loopback port the browser is sent back to (http://127.0.0.1:<n>/callback); without it, a free port for " +
      "each sign-in (register http://127.0.0.1/callback, without a port, with the Service)",
    default: "a free port"
  }),
  publicClient: publicClientFlag,
  cache: cacheFlag
}

/** `whoami`'s options (`--emulator` is parsed to say why it cannot work here) */
export const whoamiFlags = {
  ...targetFlags,
  emulator: { ...targetFlags.emulator, hidden: true },
  publicClient: publicClientFlag,
  cache: cacheFlag
}

/** `logout`'s options */
export const logoutFlags = {
  cache: cacheFlag
}

/** `emulator`'s options: those of `service-sdk-emulator` */
export const emulatorFlags = {
  port: flag(wholeNumber("port", 0, 65_535).pipe(Options.withAlias("p"), Options.withDefault(DEFAULT_EMULATOR_PORT)), {
    usage: "-p, --port <n>",
    description: "the port on 127.0.0.1 (0: any free port)",
    default: String(DEFAULT_EMULATOR_PORT)
  }),
  autoApprove: flag(Options.boolean("auto-approve"), {
    usage: "--auto-approve",
    description: "approve sign-ins at once, without showing the consent page"
  }),
  tokenLifetime: flag(wholeNumber("token-lifetime", 0, 31_536_000).pipe(Options.withDefault(3600)), {
    usage: "--token-lifetime <s>",
    description: "how long access tokens live, in seconds",
    default: "3600"
  }),
  rotateRefreshTokens: flag(Options.boolean("rotate-refresh-tokens"), {
    usage: "--rotate-refresh-tokens",
    description: "issue a new refresh token on every refresh (the old one stops working)"
  }),
  tokenLatencyMs: flag(wholeNumber("token-latency-ms", 0, 600_000).pipe(Options.withDefault(0)), {
    usage: "--token-latency-ms <ms>",
    description: "extra latency on every token response",
    default: "0"
  }),
  client: flag(Options.text("client").pipe(Options.repeated), {
    usage: "--client <id:secret>",
    description: "register another client (repeatable); an id alone is a public client"
  }),
  requirePkce: flag(Options.boolean("require-pkce"), {
    usage: "--require-pkce",
    description: "every client must use PKCE (public clients always must)"
  }),
  quiet: flag(Options.boolean("quiet").pipe(Options.withAlias("q")), {
    usage: "-q, --quiet",
    description: "no log line per request (default: one line per request on stderr: GET /v1/me 200 3 ms)"
  })
}

/** The commands, in the order the help lists them. */
export const commandHelps: ReadonlyArray<CommandHelp> = [
  {
    name: "demo",
    summary: "run the whole story against an embedded emulator (what `npm start` runs)",
    description: [
      "Runs the whole story against an emulator of the Service started for the demo: an app token, a sign-in, a " +
        "token that expires and is renewed, a thundering herd, a revoked token, a 503 storm and a public client. " +
        "Each step says what it sets and why; the summary counts the requests each step made."
    ],
    options: []
  },
  {
    name: "token",
    summary: "get an app token (client credentials), or the signed-in user's (--user), and print it masked",
    options: helpOf(tokenFlags),
    examples: [`${PROGRAM} token --emulator`, `${PROGRAM} token --reveal | pbcopy`, `${PROGRAM} token --user`]
  },
  {
    name: "login",
    summary: "sign in through the browser (authorization code with PKCE) and save the tokens",
    description: [
      "Opens the consent page in your browser, receives the answer on a loopback port and saves the tokens, so " +
        "that `whoami` (and your own programs, through the same file) can use and renew them.",
      `To try it locally, run \`${PROGRAM} emulator\` in another terminal: it prints the commands to type here.`
    ],
    options: helpOf(loginFlags),
    examples: [`${PROGRAM} login`, `${PROGRAM} login --public-client --client-id my-cli-app`]
  },
  {
    name: "whoami",
    summary: "show the signed-in user, renewing the saved token as needed",
    description: [
      "Uses the login `login` saved (its accounts service, API and client: no flag or environment needed in a new " +
        "shell; flags and SERVICE_SDK_* variables override them). A confidential client's secret is never saved: " +
        "without it the saved token serves while it is fresh."
    ],
    options: helpOf(whoamiFlags)
  },
  {
    name: "logout",
    summary: "forget the saved login: the tokens and the client file",
    description: [
      "Removes the files `login` saved: the tokens (~/.config/service-sdk/tokens.json, or --cache) and the client " +
        "file beside them (<cache>.client.json), and says which it removed. The tokens stay valid at the Service " +
        "until they expire."
    ],
    options: helpOf(logoutFlags)
  },
  {
    name: "emulator",
    summary: "run the Service emulator until Ctrl-C, and print how to sign in to it",
    description: [
      "Runs an emulator of the Service (accounts service and data API) on 127.0.0.1 until Ctrl-C, with the same " +
        "options as `service-sdk-emulator`. It prints the commands to run in another terminal: `export` lines, " +
        `then \`${PROGRAM} login\`, \`${PROGRAM} whoami\` and \`${PROGRAM} token\`, as a confidential or a public client.`
    ],
    options: helpOf(emulatorFlags),
    examples: [`${PROGRAM} emulator`, `${PROGRAM} emulator --auto-approve --token-lifetime 60`]
  }
]

export const ROOT_SUMMARY = "call the Service without handling OAuth tokens by hand"

/** The root help's last paragraphs. */
export const rootNotes: ReadonlyArray<string> = [
  `Try it: \`${PROGRAM} demo\`. Or run \`${PROGRAM} emulator\` in one terminal and follow what it prints in another ` +
    `(login, whoami, token).`
]

const demoCommand = Command.make("demo", {}, () => lazy((run) => run.demo))
const tokenCommand = Command.make("token", configOf(tokenFlags), (flags) => lazy((run) => run.token(flags)))
const loginCommand = Command.make("login", configOf(loginFlags), (flags) => lazy((run) => run.login(flags)))
const whoamiCommand = Command.make("whoami", configOf(whoamiFlags), (flags) => lazy((run) => run.whoami(flags)))
const logoutCommand = Command.make("logout", configOf(logoutFlags), (flags) => lazy((run) => run.logout(flags)))
const emulatorCommand = Command.make("emulator", configOf(emulatorFlags), (flags) => lazy((run) => run.emulator(flags)))

export const rootCommand = Command.make(PROGRAM, {}, () => Effect.void).pipe(
  Command.withSubcommands([demoCommand, tokenCommand, loginCommand, whoamiCommand, logoutCommand, emulatorCommand])
)

/** The parsed options of each command, for the handlers. */
export type TokenFlags = Command.Command.ParseConfig<ReturnType<typeof configOf<typeof tokenFlags>>>
export type LoginFlags = Command.Command.ParseConfig<ReturnType<typeof configOf<typeof loginFlags>>>
export type WhoamiFlags = Command.Command.ParseConfig<ReturnType<typeof configOf<typeof whoamiFlags>>>
export type LogoutFlags = Command.Command.ParseConfig<ReturnType<typeof configOf<typeof logoutFlags>>>
export type EmulatorFlags = Command.Command.ParseConfig<ReturnType<typeof configOf<typeof emulatorFlags>>>

export type { TargetFlags }
