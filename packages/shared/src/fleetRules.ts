/**
 * Timing rules every process keeps on a token and its shared entry, whatever its Effect line (a fleet may mix them).
 */

/**
 * How long a provider that finds the shared entry gone (a flushed or restarted store) while it still holds a refresh
 * token waits before using it: long enough for a renewal under way elsewhere (whose lock was lost with the store) to
 * store its rotated refresh token. Not for a store whose empty entry means "signed out" (`UserTokens`).
 */
export const VANISHED_ENTRY_GRACE_MILLIS = 2250

/**
 * From when (epoch ms) a token is renewed (DESIGN section 4): `expiresAt - skew`, or, for a short-lived token (a
 * known lifetime of at most twice `skew`), half-way through its lifetime, so that it is never renewed on every call.
 */
export const staleAtMillis = (
  token: { readonly expiresAt: number; readonly issuedAt?: number | undefined },
  skewMillis: number
): number => {
  const expires = token.expiresAt * 1000
  if (token.issuedAt !== undefined && token.issuedAt < token.expiresAt) {
    const lifetime = expires - token.issuedAt * 1000
    if (lifetime <= 2 * skewMillis) return expires - lifetime / 2
  }
  return expires - skewMillis
}

/**
 * After an `invalid_grant` on a shared entry (RFC 6749 §5.2; the Service rotates refresh tokens): the pauses (ms, on
 * the wall clock) between the reads of the entry for the token of the renewal elsewhere that rotated ours out, before
 * our refresh token is taken for rejected. Without a lock (`locked` false) the winner may still be writing it: every
 * 100 ms for 0.5 s. With a lock it is written already, unless the lock itself was lost: a Redis failover to a replica
 * that had not seen it, where the process holding the newer token writes it back (issue 28's kept writes) after its
 * own reconnection, which on a starved machine comes seconds late (issue 44): then every 250 ms up to 2.5 s in all. A
 * revoked refresh token on a locked cache costs its callers these 2.5 s once; then the mark answers at once.
 */
export const racePausesMillis = (locked: boolean): ReadonlyArray<number> => (locked ? LOCKED_PAUSES : UNLOCKED_PAUSES)

const UNLOCKED_PAUSES: ReadonlyArray<number> = Array.from({ length: 5 }, () => 100)
const LOCKED_PAUSES: ReadonlyArray<number> = [...UNLOCKED_PAUSES, ...Array.from({ length: 8 }, () => 250)]

/**
 * The pause (ms) before background try `attempt` (from 0) of a renewal's write that failed (the cache away): 250 ms,
 * then every 500 ms until it lands. Short, because after a Redis failover the other processes wait only 2 s (the
 * lock's settle) before renewing from the entry: a rotated refresh token written later than that makes one of them
 * present the one it replaced (issue 44; was 0.25 s doubling to 5 s). A try is one command, cheap for many users.
 */
export const unwrittenRetryPauseMillis = (attempt: number): number => (attempt === 0 ? 250 : 500)

/** A refresh token as the rule below sees it: plain values, whatever the line's `TokenInfo`. */
export interface RefreshTokenView {
  readonly expiresAt: number
  readonly refreshToken: string | undefined
  readonly refreshRejected?: boolean | undefined
}

/**
 * After our refresh token was refused (`invalid_grant`): whether the shared entry now holds a newer refresh token of
 * the same chain (`found`, later than `known`, not marked, not the one refused), even with its access token stale: a
 * write a failover had lost, restored by the process that made it (issue 44). It was never sent by us, so renewing
 * with it once is no second try of the refused one. (Whether it is this client's entry the caller checks.)
 */
export const isRestoredRefreshToken = (known: RefreshTokenView | undefined, found: RefreshTokenView): boolean =>
  known !== undefined &&
  found.refreshRejected !== true &&
  found.refreshToken !== undefined &&
  known.expiresAt < found.expiresAt &&
  known.refreshToken !== found.refreshToken
