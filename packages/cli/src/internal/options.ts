/**
 * The options of the commands, each declared once with what its help says (only the command line's own modules:
 * `--help` loads nothing else).
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import type { OptionHelp } from "./help.js"

/** An option for the parser, and what the help says about it. */
export interface Flag<A> {
  readonly option: Options.Options<A>
  readonly help: OptionHelp
  /** left out of the help (still parsed) */
  readonly hidden?: boolean
}

export const flag = <A>(option: Options.Options<A>, help: OptionHelp, hidden = false): Flag<A> => ({
  option,
  help,
  hidden
})

/** The parser's config of a table of flags. */
export const configOf = <F extends Record<string, Flag<any>>>(flags: F): { readonly [K in keyof F]: F[K]["option"] } =>
  Object.fromEntries(Object.entries(flags).map(([key, value]) => [key, value.option])) as never

/** The help of a table of flags, in declaration order. */
export const helpOf = (flags: Record<string, Flag<any>>): ReadonlyArray<OptionHelp> =>
  Object.values(flags)
    .filter((entry) => entry.hidden !== true)
    .map((entry) => entry.help)

/** A whole number from `min` to `max`, with a message in plain words when it is not. */
export const wholeNumber = (name: string, min: number, max: number) =>
  Options.text(name).pipe(
    Options.mapEffect((raw) =>
      /^\d{1,10}$/.test(raw) && Number(raw) >= min && Number(raw) <= max
        ? Effect.succeed(Number(raw))
        : Effect.fail(
            ValidationError.invalidValue(
              HelpDoc.p(`--${name} must be a whole number from ${min} to ${max}, not "${raw}"`)
            )
          )
    )
  )

/** The options every command that talks to the Service takes. */
export const targetFlags = {
  authUrl: flag(Options.text("auth-url").pipe(Options.optional), {
    usage: "--auth-url <url>",
    description: "the accounts service (token endpoint and consent page)",
    default: "https://accounts.service.example",
    env: "SERVICE_SDK_AUTH_URL"
  }),
  apiUrl: flag(Options.text("api-url").pipe(Options.optional), {
    usage: "--api-url <url>",
    description: "the data API",
    default: "https://api.service.example/v1",
    env: "SERVICE_SDK_API_URL"
  }),
  clientId: flag(Options.text("client-id").pipe(Options.optional), {
    usage: "--client-id <id>",
    description: "your app's OAuth client id",
    env: "SERVICE_SDK_CLIENT_ID"
  }),
  clientSecret: flag(Options.redacted("client-secret").pipe(Options.optional), {
    usage: "--client-secret <secret>",
    description: "your app's client secret (not for a public client)",
    env: "SERVICE_SDK_CLIENT_SECRET"
  }),
  emulator: flag(Options.boolean("emulator"), {
    usage: "--emulator",
    description:
      "use a throwaway emulator started for this command only (for a login that lasts, run `service-sdk emulator`)"
  })
}

/** `--public-client`: sign in with no secret (PKCE only), for login and whoami. */
export const publicClientFlag = flag(Options.boolean("public-client"), {
  usage: "--public-client",
  description: "sign in as a public client: no secret, PKCE only (whoami remembers it)",
  env: "SERVICE_SDK_PUBLIC_CLIENT=1"
})

export const cacheFlag = flag(Options.file("cache").pipe(Options.optional), {
  usage: "--cache <file>",
  description: "where the tokens are kept (mode 0600, in a directory only you can write)",
  default: "~/.config/service-sdk/tokens.json"
})

export const DEFAULT_LOGIN_SCOPE = "user-read-private user-read-email user-library-read"
export const DEFAULT_EMULATOR_PORT = 4000
