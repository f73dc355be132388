/**
 * The commands of `service-sdk`: demo, token, login, whoami, emulator. Their options are here; what they do is in
 * `handlers.ts`, loaded when a command runs.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { publicClientOption, targetOptions } from "./options.js"
import type { TargetFlags } from "./target.js"

/** The handlers load on first use, so `--help` and argument errors load only the command line itself. */
const lazy = <A, E, R>(f: (handlers: typeof import("./handlers.js")) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.promise(() => import("./handlers.js")),
    f
  )

const cacheOption = Options.file("cache").pipe(
  Options.withDescription("token cache file (default ~/.config/service-sdk/tokens.json, mode 0600)"),
  Options.optional
)

const demoCommand = Command.make("demo", {}, () => lazy((run) => run.demo)).pipe(
  Command.withDescription("run the whole story against an embedded emulator (what `npm start` runs)")
)

/** `token`'s options */
export const tokenConfig = {
  ...targetOptions,
  json: Options.boolean("json").pipe(Options.withDescription("print JSON")),
  reveal: Options.boolean("reveal").pipe(Options.withDescription("print the raw token (for piping)")),
  scope: Options.text("scope").pipe(Options.withDescription("space- or comma-separated scopes"), Options.optional)
}

const tokenCommand = Command.make("token", tokenConfig, (flags) => lazy((run) => run.token(flags))).pipe(
  Command.withDescription("get an app token (client credentials) and print it masked")
)

/** `login`'s options */
export const loginConfig = {
  ...targetOptions,
  scope: Options.text("scope").pipe(
    Options.withDescription("space- or comma-separated scopes"),
    Options.withDefault("user-read-private user-read-email user-library-read")
  ),
  noBrowser: Options.boolean("no-browser").pipe(Options.withDescription("print the URL instead of opening a browser")),
  port: Options.integer("port").pipe(
    Options.withDescription("loopback port for the redirect"),
    Options.withDefault(8888)
  ),
  publicClient: publicClientOption,
  cache: cacheOption
}

const loginCommand = Command.make("login", loginConfig, (flags) => lazy((run) => run.login(flags))).pipe(
  Command.withDescription("sign in through the browser (authorization code) and save the tokens")
)

/** `whoami`'s options */
export const whoamiConfig = { ...targetOptions, publicClient: publicClientOption, cache: cacheOption }

const whoamiCommand = Command.make("whoami", whoamiConfig, (flags) => lazy((run) => run.whoami(flags))).pipe(
  Command.withDescription("show the signed-in user, refreshing the saved token as needed")
)

/** `emulator`'s options */
export const emulatorConfig = {
  port: Options.integer("port").pipe(
    Options.withDescription("port on 127.0.0.1 (0: any free one)"),
    Options.withDefault(4000)
  ),
  autoApprove: Options.boolean("auto-approve").pipe(Options.withDescription("approve consent without a page")),
  tokenLifetime: Options.integer("token-lifetime").pipe(
    Options.withDescription("access token lifetime in seconds"),
    Options.withDefault(3600)
  ),
  rotateRefreshTokens: Options.boolean("rotate-refresh-tokens").pipe(
    Options.withDescription("issue a new refresh token on every refresh")
  )
}

const emulatorCommand = Command.make("emulator", emulatorConfig, (flags) => lazy((run) => run.emulator(flags))).pipe(
  Command.withDescription("run the Service emulator standalone")
)

export const rootCommand = Command.make("service-sdk", {}, () =>
  Console.log("service-sdk: try `service-sdk demo`, or `service-sdk --help`")
).pipe(
  Command.withDescription("Call the Service without handling OAuth tokens by hand"),
  Command.withSubcommands([demoCommand, tokenCommand, loginCommand, whoamiCommand, emulatorCommand])
)

export type { TargetFlags }
