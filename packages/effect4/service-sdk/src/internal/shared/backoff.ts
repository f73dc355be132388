// Copied from packages/shared/src/backoff.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The retry arithmetic shared by token calls and data-API calls: exponential backoff (0.5 s × 2^attempt, capped at
 * 8 s, jittered to 50–100 %) and the server's `Retry-After`.
 */

/** The un-jittered delay, in milliseconds, before retry number `attempt + 1` (attempt counts from 0). */
export const backoffMillis = (attempt: number): number => Math.min(500 * 2 ** attempt, 8_000)

/** The jitter range: a delay is the backoff times a factor drawn uniformly from [min, max). */
export const JITTER = { min: 0.5, max: 1 } as const

/** The longest `Retry-After` a token call waits for; longer answers fail at once with TransportError. */
export const MAX_TOKEN_RETRY_AFTER_MILLIS = 60_000

/**
 * `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §10.2.3), in milliseconds from `nowMillis`; anything else
 * (absent, negative, garbage) is undefined. A date in the past is 0.
 */
export const parseRetryAfterMillis = (header: string | undefined, nowMillis: number): number | undefined => {
  if (header === undefined) return undefined
  const value = header.trim()
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  if (Number.isNaN(date) || !/[a-z]/i.test(value)) return undefined
  return Math.max(0, date - nowMillis)
}
