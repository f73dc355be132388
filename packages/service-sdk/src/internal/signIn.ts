/**
 * Refresh tokens that expire (DESIGN section 4): a sign-in lasts as long as its refresh token, which the Service ends
 * a fixed time after the user signed in (180 days), however often it is used. The stored entry records when the user
 * signed in (`signed_in_at`) and, when the token endpoint says so (`refresh_token_expires_in`), when the sign-in ends
 * (`sign_in_ends_at`); else the `refreshTokenLifetime` option tells. This module is the one place that computes the
 * end, carries it across refreshes, warns ahead of it, and words the failure at it; the arithmetic and the words are
 * `shared/signInEnd.ts`'s, one for both lines.
 */
import * as Duration from "effect/Duration"
import { AuthenticationError } from "../ServiceError.js"
import { TokenInfo } from "../TokenInfo.js"
import { derivedToken } from "./derivedToken.js"
import * as Rules from "@service-sdk/shared/signInEnd"

/** How long before the end of a sign-in each renewal logs a warning. */
export const WARN_BEFORE_END = Duration.seconds(Rules.WARN_BEFORE_END_SECONDS)

/** When the sign-in of `token` ends (seconds since the epoch), if known. */
export const endOf = (token: TokenInfo | undefined, lifetime: Duration.Duration | undefined): number | undefined =>
  token === undefined
    ? undefined
    : Rules.endOfSignIn(token, lifetime === undefined ? undefined : Duration.toSeconds(lifetime))

/**
 * A token just obtained by a code exchange at `nowSeconds`: it records the sign-in time, and its end when the server
 * did not say (`refresh_token_expires_in`) and a lifetime is configured.
 */
export const signedIn = (token: TokenInfo, nowSeconds: number, lifetime: Duration.Duration | undefined): TokenInfo =>
  new TokenInfo({
    ...token,
    signedInAt: nowSeconds,
    signInEndsAt:
      token.signInEndsAt ??
      (lifetime === undefined ? undefined : Rules.saneInstant(nowSeconds + Duration.toSeconds(lifetime)))
  })

/** A refreshed token keeps the sign-in of `previous` (refreshing does not extend it), unless the server names a new end. */
export const carried = (previous: TokenInfo | undefined, next: TokenInfo): TokenInfo =>
  previous === undefined ||
  (previous.signedInAt === undefined && previous.signInEndsAt === undefined) ||
  (next.signedInAt !== undefined && next.signInEndsAt !== undefined)
    ? next
    : derivedToken({
        ...next,
        signedInAt: next.signedInAt ?? previous.signedInAt,
        signInEndsAt: next.signInEndsAt ?? previous.signInEndsAt
      })

/**
 * The warning to log when the sign-in of `token` ends within {@link WARN_BEFORE_END} of `nowSeconds`, if it does.
 * Never throws: it runs after a token response, whose rotated refresh token must be stored whatever happens here.
 */
export const nearEndWarning = (
  name: string,
  token: TokenInfo,
  lifetime: Duration.Duration | undefined,
  nowSeconds: number
): string | undefined => {
  try {
    return Rules.nearEndWarning(name, endOf(token, lifetime), nowSeconds)
  } catch {
    return undefined
  }
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
): AuthenticationError =>
  new AuthenticationError({
    message: Rules.rejectedMessage(error, endOf(token, lifetime), nowSeconds),
    status: error.status,
    payload: error.payload
  })

/**
 * A refusal of a refresh token that is final for that token (DESIGN section 4): `invalid_grant`, or a 400 whose body
 * names no error code at all (RFC 6749 §5.2 requires one; some servers answer an empty 400).
 */
export const isFinalRefusal = (error: { readonly _tag: string }): error is AuthenticationError =>
  error instanceof AuthenticationError && Rules.isFinalRefusal(error)

/** The failure of a refresh token the entry already marks as refused: it is not sent again. */
export const rejectedEarlier = (): AuthenticationError =>
  new AuthenticationError({
    message: Rules.REJECTED_EARLIER.message,
    payload: { ...Rules.REJECTED_EARLIER.payload }
  })
