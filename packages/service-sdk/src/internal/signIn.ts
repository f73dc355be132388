/**
 * Refresh tokens that expire (DESIGN section 4): a sign-in lasts as long as its refresh token, which the Service ends
 * a fixed time after the user signed in (180 days), however often it is used. The stored entry records when the user
 * signed in (`signed_in_at`) and, when the token endpoint says so (`refresh_token_expires_in`), when the sign-in ends
 * (`sign_in_ends_at`); else the `refreshTokenLifetime` option tells. This module is the one place that computes the
 * end, carries it across refreshes, warns ahead of it, and words the failure at it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { AuthenticationError } from "../ServiceError.js"
import { TokenInfo } from "../TokenInfo.js"

/** How long before the end of a sign-in each renewal logs a warning. */
export const WARN_BEFORE_END = Duration.days(7)

/** A refresh at or after this long before the end counts as "at the end" (clocks differ a little). */
const END_MARGIN_SECONDS = 60

/** When the sign-in of `token` ends (seconds since the epoch), if known. */
export const endOf = (token: TokenInfo | undefined, lifetime: Duration.Duration | undefined): number | undefined => {
  if (token === undefined) return undefined
  if (token.signInEndsAt !== undefined) return token.signInEndsAt
  if (token.signedInAt === undefined || lifetime === undefined) return undefined
  return token.signedInAt + Duration.toSeconds(lifetime)
}

/**
 * A token just obtained by a code exchange at `nowSeconds`: it records the sign-in time, and its end when the server
 * did not say (`refresh_token_expires_in`) and a lifetime is configured.
 */
export const signedIn = (token: TokenInfo, nowSeconds: number, lifetime: Duration.Duration | undefined): TokenInfo =>
  new TokenInfo({
    ...token,
    signedInAt: nowSeconds,
    signInEndsAt: token.signInEndsAt ?? (lifetime === undefined ? undefined : nowSeconds + Duration.toSeconds(lifetime))
  })

/** A refreshed token keeps the sign-in of `previous` (refreshing does not extend it), unless the server names a new end. */
export const carried = (previous: TokenInfo | undefined, next: TokenInfo): TokenInfo =>
  previous === undefined ||
  (previous.signedInAt === undefined && previous.signInEndsAt === undefined) ||
  (next.signedInAt !== undefined && next.signInEndsAt !== undefined)
    ? next
    : new TokenInfo({
        ...next,
        signedInAt: next.signedInAt ?? previous.signedInAt,
        signInEndsAt: next.signInEndsAt ?? previous.signInEndsAt
      })

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")

/** Logs a warning when the sign-in of `token` ends within {@link WARN_BEFORE_END} of `nowSeconds`. */
export const warnNearEnd = (
  name: string,
  token: TokenInfo,
  lifetime: Duration.Duration | undefined,
  nowSeconds: number
): Effect.Effect<void> => {
  const end = endOf(token, lifetime)
  if (end === undefined || end - nowSeconds > Duration.toSeconds(WARN_BEFORE_END)) return Effect.void
  const days = Math.max(0, Math.floor((end - nowSeconds) / 86_400))
  return Effect.logWarning(
    `${name}: the sign-in ends on ${iso(end)} (in ${days} day${days === 1 ? "" : "s"}; the refresh token is not extended by refreshing): sign in again before then`
  )
}

/**
 * The AuthenticationError for a refresh token the server refused for good (`invalid_grant`, or a 400 with no error
 * code): it says "sign in again" at the first failure, and, when the sign-in's end has come, that it ended.
 */
export const rejectedError = (
  error: AuthenticationError,
  token: TokenInfo | undefined,
  lifetime: Duration.Duration | undefined,
  nowSeconds: number
): AuthenticationError => {
  const end = endOf(token, lifetime)
  const reason =
    error.payload === undefined
      ? `${error.status ?? 400} with no error code`
      : `${error.payload.error}${error.payload.error_description ? `: ${error.payload.error_description}` : ""}`
  const message =
    end !== undefined && nowSeconds >= end - END_MARGIN_SECONDS
      ? `the sign-in ended on ${iso(end)} (the refresh token expired; refreshing does not extend it, and the server refused it: ${reason}): sign in again`
      : `the refresh token was rejected (${reason}): sign in again`
  return new AuthenticationError({ message, status: error.status, payload: error.payload })
}

/**
 * A refusal of a refresh token that is final for that token (DESIGN section 4): `invalid_grant`, or a 400 whose body
 * names no error code at all (RFC 6749 §5.2 requires one; some servers answer an empty 400).
 */
export const isFinalRefusal = (error: { readonly _tag: string }): error is AuthenticationError =>
  error instanceof AuthenticationError &&
  (error.payload?.error === "invalid_grant" || (error.status === 400 && error.payload === undefined))
