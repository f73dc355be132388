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
import type { Options as OAuthClientOptions } from "../OAuthClient.js"
import { redirectUriProblem } from "@service-sdk/shared/redirectUri"
import { maskUrlCredentials } from "@service-sdk/shared/redact"
import { normalizeScope } from "@service-sdk/shared/grant"
import { describeValue, negativeOrNaN } from "@service-sdk/shared/optionValues"
import { defaultIssuer, withoutTrailingSlashes } from "@service-sdk/shared/issuer"

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
 * The client id and secret, from options or the environment, nothing required yet (missing is none). A public client
 * (RFC 6749 §2.1) has no secret: it is neither read from the environment nor returned.
 */
export const lookupCredentials = (options: {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  readonly publicClient?: boolean | undefined
}): Effect.Effect<{
  readonly clientId: Option.Option<string>
  readonly clientSecret: Option.Option<Redacted.Redacted<string>>
}> =>
  Effect.all({
    clientId: optionOrEnv(options.clientId, ENV.clientId),
    clientSecret:
      options.publicClient === true
        ? Effect.succeed(Option.none<Redacted.Redacted<string>>())
        : Effect.map(optionOrEnv(secretValue(options.clientSecret), ENV.clientSecret), Option.map(Redacted.make))
  })

interface Credentials {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string> | undefined
}

/**
 * The client id and secret, from options or the environment ({@link lookupCredentials}), required. A public client
 * has no secret, and one passed anyway is never sent (a warning says so).
 */
export const resolveCredentials = (options: {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  readonly publicClient?: boolean | undefined
}): Effect.Effect<Credentials, ConfigurationError> =>
  Effect.flatMap(
    lookupCredentials(options),
    ({ clientId, clientSecret }): Effect.Effect<Credentials, ConfigurationError> => {
      if (Option.isNone(clientId)) return Effect.fail(missing("clientId", ENV.clientId))
      if (options.publicClient === true) {
        return Effect.as(
          Effect.when(
            Effect.logWarning(
              "publicClient: true: the clientSecret option is ignored (a public client sends no secret)"
            ),
            () => (secretValue(options.clientSecret) ?? "").trim() !== ""
          ),
          { clientId: clientId.value, clientSecret: undefined }
        )
      }
      return Option.isNone(clientSecret)
        ? Effect.fail(missing("clientSecret", ENV.clientSecret))
        : Effect.succeed({ clientId: clientId.value, clientSecret: clientSecret.value })
    }
  )

/** A base URL (http or https, no query or fragment), without its trailing slash. */
export const parseBaseUrl = (value: string, option: string): Effect.Effect<string, ConfigurationError> => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return Effect.fail(
      new ConfigurationError({ message: `${option} is not a valid URL: ${maskUrlCredentials(JSON.stringify(value))}` })
    )
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
  return Effect.succeed(withoutTrailingSlashes(url.href))
}

/** A base URL from the option, else the environment, else the default. */
export const resolveUrl = (value: string | undefined, option: "authUrl" | "apiUrl") =>
  optionOrEnv(value, ENV[option]).pipe(
    Effect.map(Option.getOrElse(() => (option === "authUrl" ? DEFAULT_AUTH_URL : DEFAULT_API_URL))),
    Effect.flatMap((url) => parseBaseUrl(url, option))
  )

/** Scope: a list is joined with single spaces; commas and whitespace runs in a string become single spaces. */
export { normalizeScope }

const invalid = (message: string) => new ConfigurationError({ message })

/**
 * The one rule for duration options, everywhere (providers, clients, the file and Redis caches): negative, NaN (the
 * number or the text), infinite, unreadable, or outside `[min, max]` is a ConfigurationError naming the option, never
 * clamped. `min`: `"positive"` (the default) or `"zero"` (zero is meaningful, e.g. `skew: 0`); `max`: milliseconds.
 */
export const durationOption = (
  value: unknown,
  options: {
    readonly option: string
    readonly fallback: Duration.DurationInput
    readonly min?: "zero" | "positive" | undefined
    readonly maxMillis?: number | undefined
  }
): Effect.Effect<Duration.Duration, ConfigurationError> => {
  const { maxMillis, option } = options
  const zero = options.min === "zero"
  const expected =
    maxMillis !== undefined
      ? `a duration from ${zero ? 0 : 1} ms to ${maxMillis} ms`
      : zero
        ? "zero or a positive duration"
        : "a positive duration"
  const input = value ?? options.fallback
  const fail = (got: string) => Effect.fail(invalid(`${option} must be ${expected}, got ${got}`))
  if (negativeOrNaN(input)) return fail(describeValue(input))
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) {
    return Effect.fail(
      invalid(`${option} is not a valid duration (${expected}, e.g. "30 seconds" or milliseconds as a number)`)
    )
  }
  const duration = decoded.value
  if (!Duration.isFinite(duration)) return fail("an infinite duration")
  const millis = Duration.toMillis(duration)
  if (!zero && !(millis > 0)) return fail("zero")
  if (maxMillis !== undefined && (millis > maxMillis || (!zero && millis < 1))) return fail(`${millis} ms`)
  return Effect.succeed(duration)
}

/** A duration option that must be longer than zero (timeouts, `maxRetryAfter`, `refreshAhead`). */
export const positiveDuration = (
  value: Duration.DurationInput | undefined,
  fallback: Duration.DurationInput,
  option: string
): Effect.Effect<Duration.Duration, ConfigurationError> => durationOption(value, { option, fallback })

/**
 * `refreshTokenLifetime`: how long a sign-in lasts when the token endpoint does not say (the Service: 180 days from
 * sign-in, not extended by refreshing). Absent: unknown, unless the server says. Else a positive, finite duration.
 */
export const refreshTokenLifetimeOption = (
  value: Duration.DurationInput | undefined
): Effect.Effect<Duration.Duration | undefined, ConfigurationError> =>
  value === undefined ? Effect.succeed(undefined) : positiveDuration(value, value, "refreshTokenLifetime")

/** A duration option where zero is meaningful (`skew: 0` uses a token until it expires). */
export const nonNegativeDuration = (
  value: Duration.DurationInput | undefined,
  fallback: Duration.DurationInput,
  option: string
): Effect.Effect<Duration.Duration, ConfigurationError> => durationOption(value, { option, fallback, min: "zero" })

/** An optional string option from plain JS: a non-string is a ConfigurationError naming it, not a TypeError later. */
export const optionalString = (
  value: unknown,
  option: string
): Effect.Effect<string | undefined, ConfigurationError> =>
  value === undefined || typeof value === "string"
    ? Effect.succeed(value)
    : Effect.fail(invalid(`${option} must be a string, got ${describeValue(value)}`))

/** An optional secret option: a string or a `Redacted` string. */
export const optionalSecret = (
  value: unknown,
  option: string
): Effect.Effect<string | Redacted.Redacted<string> | undefined, ConfigurationError> =>
  Redacted.isRedacted(value)
    ? typeof Redacted.value(value) === "string"
      ? Effect.succeed(value as Redacted.Redacted<string>)
      : Effect.fail(invalid(`${option} must be a string or a Redacted string`))
    : value === undefined || typeof value === "string"
      ? Effect.succeed(value)
      : Effect.fail(invalid(`${option} must be a string or a Redacted string, got ${describeValue(value)}`))

/** An optional scope option: a string or a list of strings. */
export const optionalScope = (
  value: unknown,
  option = "scope"
): Effect.Effect<string | ReadonlyArray<string> | undefined, ConfigurationError> =>
  value === undefined ||
  typeof value === "string" ||
  (Array.isArray(value) && value.every((part) => typeof part === "string"))
    ? Effect.succeed(value as string | ReadonlyArray<string> | undefined)
    : Effect.fail(invalid(`${option} must be a string or a list of strings, got ${describeValue(value)}`))

/** An optional boolean option from plain JS. */
export const optionalBoolean = (
  value: unknown,
  option: string
): Effect.Effect<boolean | undefined, ConfigurationError> =>
  value === undefined || typeof value === "boolean"
    ? Effect.succeed(value)
    : Effect.fail(invalid(`${option} must be true or false, got ${describeValue(value)}`))

/** The string options every provider shares, checked before anything reads them. */
export const checkProviderOptions = (options: {
  readonly clientId?: unknown
  readonly clientSecret?: unknown
  readonly scope?: unknown
  readonly authUrl?: unknown
  readonly redirectUri?: unknown
  readonly refreshToken?: unknown
  readonly publicClient?: unknown
}): Effect.Effect<void, ConfigurationError> =>
  Effect.all(
    [
      optionalString(options.clientId, "clientId"),
      optionalSecret(options.clientSecret, "clientSecret"),
      optionalScope(options.scope),
      optionalString(options.authUrl, "authUrl"),
      optionalString(options.redirectUri, "redirectUri"),
      optionalSecret(options.refreshToken, "refreshToken"),
      optionalBoolean(options.publicClient, "publicClient")
    ],
    { discard: true }
  )

export const retryCount = (
  value: number | undefined,
  option = "maxRetries"
): Effect.Effect<number, ConfigurationError> => {
  const count: unknown = value ?? 3
  return typeof count === "number" && Number.isInteger(count) && count >= 0 && count <= 20
    ? Effect.succeed(count)
    : Effect.fail(invalid(`${option} must be a whole number from 0 to 20, got ${describeValue(count)}`))
}

/** `redirectUri`: the option, else `SERVICE_SDK_REDIRECT_URI`; none when neither (only a code exchange needs it). */
export const resolveRedirectUri = (value: string | undefined): Effect.Effect<string | undefined, ConfigurationError> =>
  Effect.flatMap(optionOrEnv(value, ENV.redirectUri), (resolved) => {
    const redirectUri = Option.getOrUndefined(resolved)
    if (redirectUri === undefined) return Effect.succeed(undefined)
    // the Service's rules, at configuration time rather than at the consent page (DESIGN sections 4 and 9)
    const problem = redirectUriProblem(redirectUri)
    return problem === undefined ? Effect.succeed(redirectUri) : Effect.fail(invalid(problem))
  })

/**
 * The `issuer` option (RFC 9207): the `iss` an authorization response may carry, compared as written (simple string
 * comparison, §2.4). Default: `authUrl` without a trailing slash. A URL, else a ConfigurationError.
 */
export const resolveIssuer = (value: unknown, authUrl: string): Effect.Effect<string, ConfigurationError> => {
  if (value === undefined || value === "") return Effect.succeed(defaultIssuer(authUrl))
  return typeof value === "string" && URL.canParse(value)
    ? Effect.succeed(value)
    : Effect.fail(
        invalid(`issuer must be the authorization server's issuer URL (RFC 9207), got ${describeValue(value)}`)
      )
}

export interface ResolvedProtocol {
  readonly clientId: string
  /** None for a public client. */
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly authUrl: string
  readonly redirectUri: string | undefined
  readonly scope: string | undefined
  readonly issuer: string
  /** Refuse an authorization response without `iss` (RFC 9207 §2.4). */
  readonly requireIss: boolean
  readonly refreshTokenLifetime: Duration.Duration | undefined
  readonly timeout: Duration.Duration
  readonly maxRetries: number
}

/**
 * Every protocol option checked and resolved (explicit, then environment, then defaults): a ConfigurationError names
 * the first bad one. `redirectUri: false` for a client that never signs users in (no redirect URI is read).
 */
export const resolveProtocol = (
  options: OAuthClientOptions,
  { redirectUri: withRedirectUri = true }: { readonly redirectUri?: boolean } = {}
): Effect.Effect<ResolvedProtocol, ConfigurationError> =>
  Effect.gen(function* () {
    yield* checkProviderOptions(options)
    const { clientId, clientSecret } = yield* resolveCredentials(options)
    const authUrl = yield* resolveUrl(options.authUrl, "authUrl")
    const redirectUri = withRedirectUri ? yield* resolveRedirectUri(options.redirectUri) : undefined
    const issuer = yield* resolveIssuer(options.issuer, authUrl)
    const requireIss = (yield* optionalBoolean(options.requireIss, "requireIss")) === true
    const refreshTokenLifetime = yield* refreshTokenLifetimeOption(options.refreshTokenLifetime)
    const timeout = yield* positiveDuration(options.timeout, "30 seconds", "timeout")
    const maxRetries = yield* retryCount(options.maxRetries)
    const scope = normalizeScope(options.scope)
    return {
      clientId,
      clientSecret,
      authUrl,
      redirectUri,
      scope,
      issuer,
      requireIss,
      refreshTokenLifetime,
      timeout,
      maxRetries
    }
  })
