/**
 * The errors the SDK raises. Every one is an instance of {@link ServiceError}, is yieldable, carries a literal
 * `_tag` for `Effect.catchTag`, and never holds a secret, token, code or Authorization header.
 *
 * @since 1.0.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Redact from "@service-sdk/shared/redact"
import { nameClasses } from "@service-sdk/shared/classNames"

/**
 * The decoded body of an OAuth error response (RFC 6749 §5.2), or a description of a malformed response.
 *
 * @since 1.0.0
 * @category models
 */
export interface ErrorPayload {
  readonly error: string
  readonly error_description?: string | undefined
  readonly error_uri?: string | undefined
}

/**
 * The base class of every SDK error (`instanceof ServiceError` works in plain code).
 *
 * @since 1.0.0
 * @category errors
 */
export abstract class ServiceError extends Data.Error<{ readonly message: string; readonly cause?: unknown }> {
  abstract readonly _tag:
    | "AuthenticationError"
    | "ConfigurationError"
    | "TransportError"
    | "ApiError"
    | "RateLimitError"
    | "TokenCacheError"
}

/**
 * The token endpoint rejected the request, a token response was malformed, an authorization callback carried an
 * error or a wrong state, there is no token to refresh, or the API still answered 401 after one forced refresh.
 *
 * @since 1.0.0
 * @category errors
 */
export class AuthenticationError extends ServiceError {
  readonly _tag = "AuthenticationError" as const
  declare readonly status?: number | undefined
  declare readonly payload?: ErrorPayload | undefined
  constructor(args: {
    readonly message: string
    readonly status?: number | undefined
    readonly payload?: ErrorPayload | undefined
  }) {
    super(args)
  }
}

/**
 * Missing or conflicting options, or options that cannot work (a bad URL, a port in use, an empty code).
 *
 * @since 1.0.0
 * @category errors
 */
export class ConfigurationError extends ServiceError {
  readonly _tag = "ConfigurationError" as const
  constructor(args: { readonly message: string }) {
    super(args)
  }
}

/**
 * The network failed (connection refused or reset, a timeout) or the token endpoint kept answering 5xx or 429
 * after every retry.
 *
 * @since 1.0.0
 * @category errors
 */
export class TransportError extends ServiceError {
  readonly _tag = "TransportError" as const
  declare readonly status?: number | undefined
  constructor(args: { readonly message: string; readonly status?: number | undefined; readonly cause?: unknown }) {
    super(args)
  }
}

/**
 * The data API answered with a non-2xx status other than 401 and 429 (after retries, for 5xx).
 *
 * @since 1.0.0
 * @category errors
 */
export class ApiError extends ServiceError {
  readonly _tag = "ApiError" as const
  declare readonly status: number
  declare readonly payload?: unknown
  constructor(args: { readonly message: string; readonly status: number; readonly payload?: unknown }) {
    super(args)
  }
}

/**
 * The data API answered 429 and either the retries ran out or `Retry-After` asked for longer than `maxRetryAfter`.
 *
 * @since 1.0.0
 * @category errors
 */
export class RateLimitError extends ServiceError {
  readonly _tag = "RateLimitError" as const
  declare readonly retryAfter: Duration.Duration
  constructor(args: { readonly message: string; readonly retryAfter: Duration.Duration }) {
    super(args)
  }
}

/**
 * A token cache backend (file system, Redis) failed.
 *
 * @since 1.0.0
 * @category errors
 */
export class TokenCacheError extends ServiceError {
  readonly _tag = "TokenCacheError" as const
  constructor(args: { readonly message: string; readonly cause?: unknown }) {
    super(args)
  }
}

// Named after the keys, not `ErrorClass.name`: a minifier renames classes, and `error.name`, `error.constructor.name`
// and the stack's first line must still say which error it is
nameClasses(
  { ServiceError },
  { AuthenticationError, ConfigurationError, TransportError, ApiError, RateLimitError, TokenCacheError }
)

/**
 * Whether a value is one of the SDK's errors (any `ServiceError` subclass), for plain code and `Effect.catchIf`.
 *
 * @since 1.0.0
 * @category guards
 */
export const isServiceError = (u: unknown): u is ServiceError => u instanceof ServiceError

/**
 * Server-supplied or otherwise untrusted text (an `error_description`, an API error message, a profile field) made
 * safe to show in an error, a log line or a terminal: escape sequences and control, bidi and invisible characters
 * removed, then capped at `max` characters (512 by default; never splitting a surrogate pair). The cleaner the SDK's
 * errors use, for programs that print server text themselves (the CLI).
 *
 * @since 1.0.0
 * @category utils
 */
export const cleanUntrustedText: (text: string, max?: number) => string = Redact.cleanUntrustedText
