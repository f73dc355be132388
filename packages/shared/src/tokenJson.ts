/**
 * The stored token format, one for both Effect lines: the JSON a file, a directory entry or a Redis key holds.
 * `{ access_token, expires_at, refresh_token?, scope?, client_id?, auth_url?, issued_at?, refresh_rejected?,
 * signed_in_at?, sign_in_ends_at? }`,
 * in that key order, absent fields not written. Each line maps it to and from its own `TokenInfo` class; the
 * reading rules (lenient) and the writing rules (canonical) live here only.
 */

import { saneInstant } from "./signInEnd.js"

/** The JSON form of a stored token. */
export interface TokenJson {
  readonly access_token: string
  /** Seconds since the Unix epoch (may be fractional). */
  readonly expires_at: number
  readonly refresh_token?: string
  readonly scope?: string
  /** The client the token was issued to: an entry for another client reads as none. */
  readonly client_id?: string
  /** The authorization server that issued it. */
  readonly auth_url?: string
  /** When it was issued (seconds since the epoch): with `expires_at`, its lifetime. */
  readonly issued_at?: number
  /** Set once the authorization server answered `invalid_grant` to `refresh_token`: never sent again. */
  readonly refresh_rejected?: true
  /** When the user signed in (seconds since the epoch): set by the code exchange, kept by every refresh. */
  readonly signed_in_at?: number
  /** When the sign-in ends (seconds since the epoch): the refresh token's end; refreshing does not extend it. */
  readonly sign_in_ends_at?: number
}

/** The fields of {@link TokenJson} in the order they are written. */
export const TOKEN_JSON_KEYS = [
  "access_token",
  "expires_at",
  "refresh_token",
  "scope",
  "client_id",
  "auth_url",
  "issued_at",
  "refresh_rejected",
  "signed_in_at",
  "sign_in_ends_at"
] as const

const isFiniteNumber = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)

/**
 * A decoded JSON value read leniently as a stored token: anything but an object with a non-empty string
 * `access_token` and a finite `expires_at` is undefined; an ill-typed optional field reads as absent, and so does a
 * sign-in time out of range (`signInEnd.ts`'s `saneInstant`); unknown fields are dropped.
 */
export const fromJsonValue = (json: unknown): TokenJson | undefined => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined
  const r = json as Record<string, unknown>
  if (typeof r.access_token !== "string" || r.access_token === "" || !isFiniteNumber(r.expires_at)) return undefined
  return {
    access_token: r.access_token,
    expires_at: r.expires_at,
    ...(typeof r.refresh_token === "string" && r.refresh_token !== "" ? { refresh_token: r.refresh_token } : {}),
    ...(typeof r.scope === "string" ? { scope: r.scope } : {}),
    ...(typeof r.client_id === "string" ? { client_id: r.client_id } : {}),
    ...(typeof r.auth_url === "string" ? { auth_url: r.auth_url } : {}),
    ...(isFiniteNumber(r.issued_at) ? { issued_at: r.issued_at } : {}),
    ...(r.refresh_rejected === true ? { refresh_rejected: true as const } : {}),
    // a sign-in's times out of range (negative, huge: a corrupt entry) read as unknown, never thrown later
    ...(saneInstant(r.signed_in_at) !== undefined ? { signed_in_at: r.signed_in_at as number } : {}),
    ...(saneInstant(r.sign_in_ends_at) !== undefined ? { sign_in_ends_at: r.sign_in_ends_at as number } : {})
  }
}

/** Stored text read leniently ({@link fromJsonValue}); text that is not JSON is undefined. */
export const parseTokenJson = (text: string): TokenJson | undefined => {
  try {
    return fromJsonValue(JSON.parse(text))
  } catch {
    return undefined
  }
}

/** The text to store: the fields in {@link TOKEN_JSON_KEYS} order, absent ones left out. */
export const stringifyTokenJson = (token: TokenJson): string => {
  const ordered: Record<string, unknown> = {}
  for (const key of TOKEN_JSON_KEYS) if (token[key] !== undefined) ordered[key] = token[key]
  return JSON.stringify(ordered)
}

/**
 * The comparison of `compareAndSet`: whether `current` still is `expected`. Undefined matches only an empty entry;
 * a token matches an entry with the same access token and the same refresh token (or both none), whatever else
 * changed (a `refresh_rejected` mark, an expiry).
 */
export const sameTokenJson = (
  expected: { readonly access_token: string; readonly refresh_token?: string | undefined } | undefined,
  current: { readonly access_token: string; readonly refresh_token?: string | undefined } | undefined
): boolean =>
  expected === undefined || current === undefined
    ? expected === undefined && current === undefined
    : expected.access_token === current.access_token && expected.refresh_token === current.refresh_token
