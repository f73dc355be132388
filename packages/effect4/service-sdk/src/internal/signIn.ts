/**
 * Refresh tokens that expire (DESIGN section 4): a sign-in lasts as long as its refresh token, which the Service ends
 * a fixed time after the user signed in (180 days), however often it is used. The entry records when the user signed
 * in (`signed_in_at`) and, when the token endpoint says so (`refresh_token_expires_in`), when the sign-in ends
 * (`sign_in_ends_at`); else the `refreshTokenLifetime` option tells. The one place that computes the end, carries it
 * across refreshes, warns ahead of it, and words the failure at it (the same rules and words as the Effect 3 line).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AuthenticationError, type TokenCacheError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import { TokenInfo } from "../TokenInfo.js"
import * as Rules from "@service-sdk/shared/signInEnd"

/** When the sign-in of `token` ends (seconds since the epoch), if known. */
export const endOf = (token: TokenInfo | undefined, lifetime: Duration.Duration | undefined): number | undefined =>
  token === undefined
    ? undefined
    : Rules.endOfSignIn(token, lifetime === undefined ? undefined : Duration.toSeconds(lifetime))

/** A token just obtained by a code exchange: it records the sign-in time, and its end when a lifetime is known. */
export const signedIn = (token: TokenInfo, nowSeconds: number, lifetime: Duration.Duration | undefined): TokenInfo => {
  const end = token.signInEndsAt ?? (lifetime === undefined ? undefined : nowSeconds + Duration.toSeconds(lifetime))
  return new TokenInfo({ ...token, signedInAt: nowSeconds, ...(end !== undefined ? { signInEndsAt: end } : {}) })
}

/** A refreshed token keeps the sign-in of `previous` (refreshing does not extend it), unless the server names a new end. */
export const carried = (previous: TokenInfo | undefined, next: TokenInfo): TokenInfo => {
  if (previous === undefined || (previous.signedInAt === undefined && previous.signInEndsAt === undefined)) return next
  const signedInAt = next.signedInAt ?? previous.signedInAt
  const signInEndsAt = next.signInEndsAt ?? previous.signInEndsAt
  return new TokenInfo({
    ...next,
    ...(signedInAt !== undefined ? { signedInAt } : {}),
    ...(signInEndsAt !== undefined ? { signInEndsAt } : {})
  })
}

/** Logs a warning when the sign-in of `token` ends within 7 days of `nowSeconds`. */
export const warnNearEnd = (
  name: string,
  token: TokenInfo,
  lifetime: Duration.Duration | undefined,
  nowSeconds: number
): Effect.Effect<void> => {
  const warning = Rules.nearEndWarning(name, endOf(token, lifetime), nowSeconds)
  return warning === undefined ? Effect.void : Effect.logWarning(warning)
}

/** The AuthenticationError for a refresh token the server refused for good (the words of `shared/signInEnd.ts`). */
export const rejectedError = (
  error: AuthenticationError,
  token: TokenInfo | undefined,
  lifetime: Duration.Duration | undefined,
  nowSeconds: number
): AuthenticationError =>
  new AuthenticationError({
    message: Rules.rejectedMessage(error, endOf(token, lifetime), nowSeconds),
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.payload !== undefined ? { payload: error.payload } : {})
  })

/** When the sign-in kept in `cache` ends, read from its entry (an entry of another client reads as none). */
export const signInEnd = (
  cache: TokenCache,
  accepts: (token: TokenInfo) => boolean,
  lifetime: Duration.Duration | undefined
): Effect.Effect<Option.Option<Date>, TokenCacheError> =>
  Effect.map(cache.get, (entry) =>
    Option.flatMap(Option.filter(entry, accepts), (token) =>
      Option.map(Option.fromUndefinedOr(endOf(token, lifetime)), (end) => new Date(end * 1000))
    )
  )
