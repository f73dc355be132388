/**
 * Which Service a command talks to: the real one (flags, then the SDK's environment variables, read by the SDK's one
 * option/environment fallback, `OAuthClient.resolveClient`), or an embedded emulator (`--emulator`), started on a
 * free loopback port for the command's lifetime.
 */
import { Emulator } from "@service-sdk/effect/testing"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { ConfigurationError, OAuthClient } from "@service-sdk/effect"
import type { SavedLogin } from "./login.js"

/** `SERVICE_SDK_PUBLIC_CLIENT`: 1, true or yes turn it on. */
export const publicClientFromEnv: Effect.Effect<boolean> = Config.option(
  Config.string("SERVICE_SDK_PUBLIC_CLIENT")
).pipe(
  Effect.map((value) => Option.exists(value, (text) => /^(1|true|yes)$/i.test(text.trim()))),
  Effect.orElseSucceed(() => false)
)

/** The Service's accounts service (the SDK's default `authUrl`). */
export const DEFAULT_AUTH_URL = "https://accounts.service.example"

/**
 * How a command signs in, when it has a say: as a public client; the login saved beside the tokens (its accounts
 * service and API, used when neither a flag nor the environment names them; its client id, which only `--client-id`
 * overrides: the saved tokens belong to that client); and whether a confidential
 * client may go without its secret (`whoami`, `token --user`: a saved token that is still fresh needs none).
 */
export interface ClientKind {
  readonly publicClient: boolean
  readonly saved?: SavedLogin | undefined
  readonly secretOptional?: boolean | undefined
}

/** An SDK environment variable, when set and not empty. */
export const sdkEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(
    Effect.map(Option.filter((value) => value.trim() !== "")),
    Effect.orElseSucceed(() => Option.none())
  )

/** The flag, else (when the environment does not name it: the SDK reads it then) the saved login's value. */
const flagOrSaved = (flag: Option.Option<string>, env: string, saved: string | undefined) =>
  Effect.map(sdkEnv(env), (set) =>
    Option.getOrUndefined(Option.isSome(flag) || Option.isSome(set) ? flag : Option.fromNullable(saved))
  )

export interface TargetFlags {
  readonly authUrl: Option.Option<string>
  readonly apiUrl: Option.Option<string>
  readonly clientId: Option.Option<string>
  readonly clientSecret: Option.Option<Redacted.Redacted<string>>
  readonly emulator: boolean
}

/** Resolved connection settings; an `apiUrl` of `undefined` lets the SDK read its environment variable. */
export interface Target {
  /** The accounts service: `--auth-url`, `SERVICE_SDK_AUTH_URL` or the Service's, as the SDK resolves it. */
  readonly authUrl: string
  readonly apiUrl: string | undefined
  readonly clientId: string
  /** None for a public client (and for a confidential one when the command can go without: `secretOptional`). */
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly publicClient: boolean
  /** The embedded emulator, with `--emulator`. */
  readonly emulator: Emulator.Service | undefined
}

/** The connection settings of a command, starting an embedded emulator (scoped) with `--emulator`. */
export const resolveTarget = (
  flags: TargetFlags,
  emulatorOptions: Emulator.Options = {},
  kind: ClientKind = { publicClient: false }
): Effect.Effect<Target, ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const { publicClient } = kind
    if (publicClient && Option.isSome(flags.clientSecret)) {
      return yield* new ConfigurationError({
        message: "--public-client takes no --client-secret (a public client keeps no secret): drop one of them"
      })
    }
    if (flags.emulator) {
      const emulator = yield* Emulator.make(emulatorOptions)
      return {
        authUrl: emulator.authUrl,
        apiUrl: emulator.apiUrl,
        clientId: Option.getOrElse(flags.clientId, () => (publicClient ? emulator.publicClientId : emulator.clientId)),
        clientSecret: publicClient
          ? undefined
          : Option.getOrElse(flags.clientSecret, () => Redacted.make(emulator.clientSecret)),
        publicClient,
        emulator
      }
    }
    // the SDK's own fallback: the flag (or the saved login's client: it wins over SERVICE_SDK_CLIENT_ID, the saved
    // tokens belong to it), else the environment; a public client's secret is never read
    const saved = kind.saved
    const resolved = yield* OAuthClient.resolveClient({
      // the saved client wins over SERVICE_SDK_CLIENT_ID (the saved tokens belong to it: a shell that exported the
      // emulator's confidential client, then signed in as its public one, keeps working); --client-id overrides it
      clientId: Option.getOrUndefined(Option.orElse(flags.clientId, () => Option.fromNullable(saved?.clientId))),
      clientSecret: Option.getOrUndefined(flags.clientSecret),
      publicClient,
      authUrl: yield* flagOrSaved(flags.authUrl, "SERVICE_SDK_AUTH_URL", saved?.authUrl)
    })
    const apiUrl = yield* flagOrSaved(flags.apiUrl, "SERVICE_SDK_API_URL", saved?.apiUrl)
    const id = resolved.clientId
    if (publicClient) {
      if (Option.isNone(id)) {
        return yield* new ConfigurationError({
          message:
            "missing credentials: pass --client-id / SERVICE_SDK_CLIENT_ID (to try it locally: `service-sdk emulator`, then what it prints)"
        })
      }
      return {
        authUrl: resolved.authUrl,
        apiUrl,
        clientId: id.value,
        clientSecret: undefined,
        publicClient,
        emulator: undefined
      }
    }
    const secret = resolved.clientSecret
    if (Option.isSome(id) && Option.isNone(secret) && kind.secretOptional === true) {
      return {
        authUrl: resolved.authUrl,
        apiUrl,
        clientId: id.value,
        clientSecret: undefined,
        publicClient,
        emulator: undefined
      }
    }
    if (Option.isNone(id) || Option.isNone(secret)) {
      const missing = [
        ...(Option.isNone(id) ? ["--client-id / SERVICE_SDK_CLIENT_ID"] : []),
        ...(Option.isNone(secret) ? ["--client-secret / SERVICE_SDK_CLIENT_SECRET"] : [])
      ]
      return yield* new ConfigurationError({
        message: `missing credentials: pass ${missing.join(" and ")} (to try it locally: \`service-sdk emulator\`, then what it prints)`
      })
    }
    return {
      authUrl: resolved.authUrl,
      apiUrl,
      clientId: id.value,
      clientSecret: secret.value,
      publicClient,
      emulator: undefined
    }
  })
