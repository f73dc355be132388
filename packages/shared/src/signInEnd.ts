/**
 * The end of a sign-in (DESIGN section 4, refresh tokens that expire), as arithmetic and words for both Effect lines:
 * when it ends, when to warn, and what the failure at the end says.
 */

/** How long before the end of a sign-in each renewal logs a warning: 7 days. */
export const WARN_BEFORE_END_SECONDS = 7 * 86_400

/** A refresh at or after this long before the end counts as "at the end" (clocks differ a little). */
export const END_MARGIN_SECONDS = 60

/** The latest instant a sign-in's times may name: the last second of year 9999 (seconds since the epoch). */
export const LATEST_INSTANT_SECONDS = 253_402_300_799

/**
 * `seconds` when it is a sane instant (seconds since the epoch): a finite number from 0 to the end of year 9999.
 * Anything else (negative, NaN, infinite, huge: a corrupt entry, a server's `refresh_token_expires_in` of 1e13) is
 * read as unknown, never turned into an Invalid Date (DESIGN section 9, "Tokens").
 */
export const saneInstant = (seconds: unknown): number | undefined =>
  typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0 && seconds <= LATEST_INSTANT_SECONDS
    ? seconds
    : undefined

/**
 * When a sign-in ends that a token response says ends `expiresIn` seconds from `nowSeconds`
 * (`refresh_token_expires_in`), or undefined when the server did not say or said something out of range.
 */
export const endFromNow = (nowSeconds: number, expiresIn: number | null | undefined): number | undefined =>
  expiresIn == null || saneInstant(expiresIn) === undefined ? undefined : saneInstant(nowSeconds + expiresIn)

/**
 * When a sign-in ends (seconds since the epoch), if known: its recorded end, else its start plus the lifetime. A
 * time out of range ({@link saneInstant}) counts as unknown.
 */
export const endOfSignIn = (
  token: { readonly signedInAt?: number | undefined; readonly signInEndsAt?: number | undefined },
  lifetimeSeconds: number | undefined
): number | undefined => {
  const recorded = saneInstant(token.signInEndsAt)
  if (recorded !== undefined) return recorded
  const start = saneInstant(token.signedInAt)
  return start === undefined || lifetimeSeconds === undefined ? undefined : saneInstant(start + lifetimeSeconds)
}

/**
 * An instant (seconds since the epoch) as the words print it: ISO 8601 in UTC, to the second. One out of range
 * ({@link saneInstant}) prints as "an unknown date" rather than throwing `RangeError: Invalid time value`.
 */
export const iso = (seconds: number): string =>
  saneInstant(seconds) === undefined
    ? "an unknown date"
    : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")

/** The instant as a `Date`, or undefined when it is out of range ({@link saneInstant}): never an Invalid Date. */
export const dateOf = (seconds: number | undefined): Date | undefined => {
  const sane = saneInstant(seconds)
  return sane === undefined ? undefined : new Date(sane * 1000)
}

/** How long until `end`, in whole days and never below zero: "in 3 days", "in 1 day", "in 0 days". */
export const inDays = (end: number, nowSeconds: number): string => {
  const days = Math.max(0, Math.floor((end - nowSeconds) / 86_400))
  return `in ${days} day${days === 1 ? "" : "s"}`
}

/** The warning of a renewal within 7 days of the end, or undefined when the end is further or unknown. */
export const nearEndWarning = (name: string, end: number | undefined, nowSeconds: number): string | undefined => {
  if (end === undefined || end - nowSeconds > WARN_BEFORE_END_SECONDS) return undefined
  return `${name}: the sign-in ends on ${iso(end)} (${inDays(end, nowSeconds)}; the refresh token is not extended by refreshing): sign in again before then`
}

/**
 * The message for a refresh token the server refused for good: "sign in again" at the first failure, and, when the
 * sign-in's end has come, that it ended.
 */
export const rejectedMessage = (
  refusal: {
    readonly status?: number | undefined
    readonly payload?: { readonly error: string; readonly error_description?: string | undefined } | undefined
  },
  end: number | undefined,
  nowSeconds: number
): string => {
  const reason =
    refusal.payload === undefined
      ? `${refusal.status ?? 400} with no error code`
      : `${refusal.payload.error}${refusal.payload.error_description ? `: ${refusal.payload.error_description}` : ""}`
  return end !== undefined && nowSeconds >= end - END_MARGIN_SECONDS
    ? `the sign-in ended on ${iso(end)} (the refresh token expired; refreshing does not extend it, and the server refused it: ${reason}): sign in again`
    : `the refresh token was rejected (${reason}): sign in again`
}

/**
 * A refusal that is final for the refresh token sent (DESIGN section 4): `invalid_grant`, or a 400 whose body names no
 * error code at all (RFC 6749 §5.2 requires one; some servers answer an empty 400).
 */
export const isFinalRefusal = (refusal: {
  readonly status?: number | undefined
  readonly payload?: { readonly error: string } | undefined
}): boolean => refusal.payload?.error === "invalid_grant" || (refusal.status === 400 && refusal.payload === undefined)

/** The failure of a refresh token the entry already marks as refused (`refresh_rejected`): it is not sent again. */
export const REJECTED_EARLIER = {
  message: "the refresh token was rejected (invalid_grant): sign in again",
  payload: { error: "invalid_grant", error_description: "the refresh token was rejected earlier and is not sent again" }
} as const
