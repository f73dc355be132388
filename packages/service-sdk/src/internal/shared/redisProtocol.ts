// Copied from packages/shared/src/redisProtocol.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The Redis protocol of the shared token cache, one for both Effect lines (processes of both may share one Redis):
 * the key names and the entry's time to live; the Lua scripts are in `redisScripts.ts`. The lock's value is its
 * owner's id (a random UUID); the entry is the stored token JSON.
 */

/** The lock key of an entry key. */
export const lockKey = (key: string): string => `${key}:lock`

const SAFE = /[A-Za-z0-9_.@-]/

/** A user id as a key suffix: safe characters as they are, any other UTF-16 unit as `%xxxx` (injective). */
export const encodeUserId = (userId: string): string => {
  let out = ""
  for (let i = 0; i < userId.length; i++) {
    const char = userId[i]!
    out += SAFE.test(char) ? char : `%${userId.charCodeAt(i).toString(16).padStart(4, "0")}`
  }
  return out
}

/** The entry key of a user in a store with `prefix`. */
export const userKey = (prefix: string, userId: string): string => `${prefix}${encodeUserId(userId)}`

/** An entry without a refresh token outlives its access token by this much (other hosts' clocks may lag). */
export const EXPIRY_GRACE_MILLIS = 60_000

/**
 * How long Redis keeps an entry, in milliseconds, or `undefined` for no expiry. An entry with a refresh token never
 * expires: the refresh token must outlive the access token.
 */
export const entryTtlMillis = (
  hasRefreshToken: boolean,
  expiresAtSeconds: number,
  nowMillis: number
): number | undefined =>
  hasRefreshToken ? undefined : Math.max(1000, Math.ceil(expiresAtSeconds * 1000 - nowMillis) + EXPIRY_GRACE_MILLIS)

/** How often a holder extends its lock: every third of its TTL, and at least once a second. */
export const heartbeatInterval = (ttlMillis: number): number => Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))
