/**
 * Option resolution shared by every public constructor: explicit options win, then the environment (read through
 * Effect `Config`, so a `ConfigProvider` can replace it), then defaults. Empty strings count as absent. Bad options
 * are a ConfigurationError naming the option, never clamped.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ConfigurationError } from "../ServiceError.js"
import { normalizeScope } from "@service-sdk/shared/grant"
import { describeValue, negativeOrNaN } from "@service-sdk/shared/optionValues"
import { maskUrlCredentials } from "@service-sdk/shared/redact"

export { normalizeScope }

export const DEFAULT_AUTH_URL = "https://accounts.service.example"
export const DEFAULT_API_URL = "https://api.service.example/v1"

export const ENV = {
  clientId: "SERVICE_SDK_CLIENT_ID",
  clientSecret: "SERVICE_SDK_CLIENT_SECRET",
  redirectUri: "SERVICE_SDK_REDIRECT_URI",
  authUrl: "SERVICE_SDK_AUTH_URL",
  apiUrl: "SERVICE_SDK_API_URL"
} as const

const invalid = (message: string) => new ConfigurationError({ message })

const nonEmpty = (value: string | undefined): Option.Option<string> =>
  value === undefined || value.trim() === "" ? Option.none() : Option.some(value.trim())

/** An environment variable through `Config`; unset, empty or unreadable reads as none. */
export const fromEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.String(name)).pipe(
    Effect.map(Option.flatMap((value: string) => nonEmpty(value))),
    Effect.orElseSucceed(() => Option.none<string>())
  )

/** The explicit option when given (and not empty), else the environment variable. */
export const optionOrEnv = (value: string | undefined, name: string): Effect.Effect<Option.Option<string>> => {
  const explicit = nonEmpty(value)
  return Option.isSome(explicit) ? Effect.succeed(explicit) : fromEnv(name)
}

export const requiredOption = (value: string | undefined, option: keyof typeof ENV) =>
  Effect.flatMap(optionOrEnv(value, ENV[option]), (resolved) =>
    Option.match(resolved, {
      onNone: () => Effect.fail(invalid(`missing ${option}: pass the \`${option}\` option or set ${ENV[option]}`)),
      onSome: Effect.succeed
    })
  )

export const secretValue = (value: string | Redacted.Redacted<string> | undefined): string | undefined =>
  value === undefined ? undefined : Redacted.isRedacted(value) ? Redacted.value(value) : value

/**
 * The client id and secret, from options or the environment, nothing required yet (missing is none). A public client
 * has no secret: it is neither read from the environment nor returned.
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

const decodeDuration = (value: unknown, option: string, expected: string) => {
  if (negativeOrNaN(value)) return Effect.fail(invalid(`${option} must be ${expected}, got ${describeValue(value)}`))
  let decoded: Option.Option<Duration.Duration>
  try {
    decoded = Duration.fromInput(value as Duration.Input)
  } catch {
    decoded = Option.none()
  }
  return Option.match(decoded, {
    onNone: () =>
      Effect.fail(
        invalid(`${option} is not a valid duration (${expected}, e.g. "30 seconds" or milliseconds as a number)`)
      ),
    onSome: (duration) =>
      Duration.isFinite(duration) ? Effect.succeed(duration) : Effect.fail(invalid(`${option} must be finite`))
  })
}

/** A duration option that must be longer than zero: negative, zero, NaN, infinite or unreadable values fail. */
export const positiveDuration = (
  value: Duration.Input | undefined,
  fallback: Duration.Input,
  option: string
): Effect.Effect<Duration.Duration, ConfigurationError> =>
  Effect.flatMap(decodeDuration(value ?? fallback, option, "a positive duration"), (duration) =>
    Duration.isPositive(duration)
      ? Effect.succeed(duration)
      : Effect.fail(invalid(`${option} must be a positive duration, got zero`))
  )

/** A duration option where zero is meaningful (`skew: 0`); negative or NaN is not. */
export const nonNegativeDuration = (
  value: Duration.Input | undefined,
  fallback: Duration.Input,
  option: string
): Effect.Effect<Duration.Duration, ConfigurationError> =>
  decodeDuration(value ?? fallback, option, "zero or a positive duration")

const optionalOf =
  <A>(check: (value: unknown) => boolean, expected: string) =>
  (value: unknown, option: string): Effect.Effect<A | undefined, ConfigurationError> =>
    value === undefined || check(value)
      ? Effect.succeed(value as A | undefined)
      : Effect.fail(invalid(`${option} must be ${expected}, got ${describeValue(value)}`))

export const optionalString = optionalOf<string>((v) => typeof v === "string", "a string")
export const optionalBoolean = optionalOf<boolean>((v) => typeof v === "boolean", "true or false")
export const optionalScope = optionalOf<string | ReadonlyArray<string>>(
  (v) => typeof v === "string" || (Array.isArray(v) && v.every((part) => typeof part === "string")),
  "a string or a list of strings"
)
export const optionalSecret = optionalOf<string | Redacted.Redacted<string>>(
  (v) => typeof v === "string" || (Redacted.isRedacted(v) && typeof Redacted.value(v) === "string"),
  "a string or a Redacted string"
)

/** A retry count: a whole number from 0 to 20 (default 3). */
export const retryCount = (value: unknown, option = "maxRetries"): Effect.Effect<number, ConfigurationError> => {
  const count = value ?? 3
  return typeof count === "number" && Number.isInteger(count) && count >= 0 && count <= 20
    ? Effect.succeed(count)
    : Effect.fail(invalid(`${option} must be a whole number from 0 to 20, got ${describeValue(count)}`))
}

/** A base URL (http or https, no credentials, query or fragment), without its trailing slash. */
export const parseBaseUrl = (value: string, option: string): Effect.Effect<string, ConfigurationError> => {
  if (!URL.canParse(value)) {
    return Effect.fail(invalid(`${option} is not a valid URL: ${maskUrlCredentials(JSON.stringify(value))}`))
  }
  const url = new URL(value)
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Effect.fail(invalid(`${option} must be an http or https URL, got ${url.protocol}`))
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    return Effect.fail(invalid(`${option} must be a plain base URL without credentials, query or fragment`))
  }
  return Effect.succeed(url.href.replace(/\/+$/, ""))
}

/** A base URL from the option, else the environment, else the default. */
export const resolveUrl = (value: string | undefined, option: "authUrl" | "apiUrl") =>
  optionOrEnv(value, ENV[option]).pipe(
    Effect.map(Option.getOrElse(() => (option === "authUrl" ? DEFAULT_AUTH_URL : DEFAULT_API_URL))),
    Effect.flatMap((url) => parseBaseUrl(url, option))
  )

/**
 * The protocol's options, declared once: `OAuthClient` takes them; the providers extend them.
 *
 * @since 2.0.0
 */
export interface ProtocolOptions {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  /**
   * An app that keeps no secret (RFC 8252 §8.4): no `clientSecret` is required or read, token requests carry
   * `client_id` in the body and no Authorization header, and code exchanges must use PKCE. Default false.
   */
  readonly publicClient?: boolean | undefined
  /** The authorization server (default `https://accounts.service.example`, or `SERVICE_SDK_AUTH_URL`). */
  readonly authUrl?: string | undefined
  /** Needed by code exchanges and sent in authorization URLs (or `SERVICE_SDK_REDIRECT_URI`). */
  readonly redirectUri?: string | undefined
  /** The default scope of authorization URLs and of token requests. */
  readonly scope?: string | ReadonlyArray<string> | undefined
  /** Per attempt of a token request (default 30 s). */
  readonly timeout?: Duration.Input | undefined
  /** Retries of a token request after the first attempt, for transport errors, 5xx and 429 (default 3). */
  readonly maxRetries?: number | undefined
  /** The `iss` a callback must carry when it has one (RFC 9207; default the `authUrl`). */
  readonly issuer?: string | undefined
  /**
   * How long a sign-in lasts when the token endpoint does not say so with `refresh_token_expires_in`: the Service
   * ends refresh tokens 180 days after the sign-in (`"180 days"`). Off by default.
   */
  readonly refreshTokenLifetime?: Duration.Input | undefined
}

export interface ResolvedProtocol {
  readonly clientId: string
  /** None for a public client. */
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly authUrl: string
  readonly issuer: string
  readonly redirectUri: string | undefined
  readonly scope: string | undefined
  readonly timeout: Duration.Duration
  readonly maxRetries: number
  readonly refreshTokenLifetime: Duration.Duration | undefined
}

/** Every protocol option checked and resolved: a ConfigurationError names the first bad one. */
export const resolveProtocol = (options: ProtocolOptions): Effect.Effect<ResolvedProtocol, ConfigurationError> =>
  Effect.gen(function* () {
    if (typeof options !== "object" || options === null) return yield* invalid("options must be an object")
    const clientIdOption = yield* optionalString(options.clientId, "clientId")
    const secretOption = yield* optionalSecret(options.clientSecret, "clientSecret")
    yield* optionalScope(options.scope, "scope")
    yield* optionalString(options.authUrl, "authUrl")
    yield* optionalString(options.redirectUri, "redirectUri")
    yield* optionalString(options.issuer, "issuer")
    const publicClient = (yield* optionalBoolean(options.publicClient, "publicClient")) === true
    const clientId = yield* requiredOption(clientIdOption, "clientId")
    let clientSecret: Redacted.Redacted<string> | undefined
    if (publicClient) {
      if ((secretValue(secretOption) ?? "").trim() !== "") {
        yield* Effect.logWarning(
          "publicClient: true: the clientSecret option is ignored (a public client sends no secret)"
        )
      }
    } else {
      clientSecret = Redacted.make(yield* requiredOption(secretValue(secretOption), "clientSecret"))
    }
    const authUrl = yield* resolveUrl(options.authUrl, "authUrl")
    const redirectUri = Option.getOrUndefined(yield* optionOrEnv(options.redirectUri, ENV.redirectUri))
    if (redirectUri !== undefined && !URL.canParse(redirectUri)) {
      return yield* invalid(`redirectUri is not a valid URL: ${maskUrlCredentials(JSON.stringify(redirectUri))}`)
    }
    const timeout = yield* positiveDuration(options.timeout, "30 seconds", "timeout")
    const maxRetries = yield* retryCount(options.maxRetries)
    const issuer = (options.issuer ?? authUrl).replace(/\/+$/, "")
    const refreshTokenLifetime =
      options.refreshTokenLifetime === undefined
        ? undefined
        : yield* positiveDuration(options.refreshTokenLifetime, 1, "refreshTokenLifetime")
    return {
      refreshTokenLifetime,
      clientId,
      clientSecret,
      authUrl,
      issuer,
      redirectUri,
      scope: normalizeScope(options.scope),
      timeout,
      maxRetries
    }
  })
