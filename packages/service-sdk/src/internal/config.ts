/**
 * Option resolution shared by every public constructor: explicit options win, then the environment (read through
 * Effect `Config`, so a `ConfigProvider` can replace it), then defaults. Empty strings count as absent.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ConfigurationError } from "../ServiceError.js"

export const DEFAULT_AUTH_URL = "https://accounts.service.example"
export const DEFAULT_API_URL = "https://api.service.example/v1"

export const ENV = {
  clientId: "SERVICE_SDK_CLIENT_ID",
  clientSecret: "SERVICE_SDK_CLIENT_SECRET",
  redirectUri: "SERVICE_SDK_REDIRECT_URI",
  authUrl: "SERVICE_SDK_AUTH_URL",
  apiUrl: "SERVICE_SDK_API_URL"
} as const

const nonEmpty = (value: string | undefined): Option.Option<string> =>
  value === undefined || value.trim() === "" ? Option.none() : Option.some(value.trim())

/** An environment variable through `Config`; unset, empty or unreadable reads as none. */
export const fromEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(
    Effect.map(Option.flatMap((value) => nonEmpty(value))),
    Effect.orElseSucceed(() => Option.none<string>())
  )

/** The explicit option when given (and not empty), else the environment variable. */
export const optionOrEnv = (value: string | undefined, name: string): Effect.Effect<Option.Option<string>> => {
  const explicit = nonEmpty(value)
  return Option.isSome(explicit) ? Effect.succeed(explicit) : fromEnv(name)
}

const missing = (option: string, variable: string) =>
  new ConfigurationError({ message: `missing ${option}: pass the \`${option}\` option or set ${variable}` })

export const requiredOption = (value: string | undefined, option: keyof typeof ENV) =>
  Effect.flatMap(optionOrEnv(value, ENV[option]), (resolved) =>
    Option.match(resolved, {
      onNone: () => Effect.fail(missing(option, ENV[option])),
      onSome: Effect.succeed
    })
  )

export const secretValue = (value: string | Redacted.Redacted<string> | undefined): string | undefined =>
  value === undefined ? undefined : Redacted.isRedacted(value) ? Redacted.value(value) : value

/**
 * The client id and secret, from options or the environment. A public client (RFC 6749 §2.1) has no secret: it is
 * neither required nor read from the environment, and one passed anyway is never sent (a warning says so).
 */
export const resolveCredentials = (options: {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  readonly publicClient?: boolean | undefined
}): Effect.Effect<
  { readonly clientId: string; readonly clientSecret: Redacted.Redacted<string> | undefined },
  ConfigurationError
> =>
  options.publicClient === true
    ? Effect.zipLeft(
        Effect.map(requiredOption(options.clientId, "clientId"), (clientId) => ({ clientId, clientSecret: undefined })),
        Effect.when(
          Effect.logWarning("publicClient: true: the clientSecret option is ignored (a public client sends no secret)"),
          () => (secretValue(options.clientSecret) ?? "").trim() !== ""
        )
      )
    : Effect.all({
        clientId: requiredOption(options.clientId, "clientId"),
        clientSecret: Effect.map(requiredOption(secretValue(options.clientSecret), "clientSecret"), Redacted.make)
      })

/** A base URL (http or https, no query or fragment), without its trailing slash. */
export const parseBaseUrl = (value: string, option: string): Effect.Effect<string, ConfigurationError> => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return Effect.fail(new ConfigurationError({ message: `${option} is not a valid URL: ${JSON.stringify(value)}` }))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Effect.fail(
      new ConfigurationError({ message: `${option} must be an http or https URL, got ${url.protocol}` })
    )
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    return Effect.fail(
      new ConfigurationError({ message: `${option} must be a plain base URL without credentials, query or fragment` })
    )
  }
  return Effect.succeed(url.href.replace(/\/+$/, ""))
}

/** A base URL from the option, else the environment, else the default. */
export const resolveUrl = (value: string | undefined, option: "authUrl" | "apiUrl") =>
  optionOrEnv(value, ENV[option]).pipe(
    Effect.map(Option.getOrElse(() => (option === "authUrl" ? DEFAULT_AUTH_URL : DEFAULT_API_URL))),
    Effect.flatMap((url) => parseBaseUrl(url, option))
  )

/** Scope: a list is joined with single spaces; commas and whitespace runs in a string become single spaces. */
export const normalizeScope = (scope: string | ReadonlyArray<string> | undefined): string | undefined => {
  if (scope === undefined) return undefined
  const parts = (typeof scope === "string" ? [scope] : scope).flatMap((part) => part.split(/[\s,]+/))
  const joined = parts.filter((part) => part !== "").join(" ")
  return joined === "" ? undefined : joined
}

export const positiveDuration = (
  value: Duration.DurationInput | undefined,
  fallback: Duration.DurationInput,
  option: string
): Effect.Effect<Duration.Duration, ConfigurationError> => {
  const decoded = Duration.decodeUnknown(value ?? fallback)
  return Option.match(decoded, {
    onNone: () => Effect.fail(new ConfigurationError({ message: `${option} is not a valid duration` })),
    onSome: (duration) =>
      Duration.isFinite(duration)
        ? Effect.succeed(duration)
        : Effect.fail(new ConfigurationError({ message: `${option} must be finite` }))
  })
}

export const retryCount = (
  value: number | undefined,
  option = "maxRetries"
): Effect.Effect<number, ConfigurationError> => {
  const count = value ?? 3
  return Number.isInteger(count) && count >= 0 && count <= 20
    ? Effect.succeed(count)
    : Effect.fail(new ConfigurationError({ message: `${option} must be a whole number from 0 to 20, got ${count}` }))
}
