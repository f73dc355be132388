/**
 * Timing rules every process of a fleet keeps on a shared entry, whatever its Effect line (a fleet may mix them).
 */

/**
 * How long a provider that finds the shared entry gone (a flushed or restarted store) while it still holds a refresh
 * token waits before using it: long enough for a renewal under way elsewhere (whose lock was lost with the store) to
 * store its rotated refresh token. Not for a store whose empty entry means "signed out" (`UserTokens`).
 */
export const VANISHED_ENTRY_GRACE_MILLIS = 2250
