/**
 * Obtaining a token in the flight's turn (`join.ts`: this process's lock), from the memo, the shared cache, then, when
 * the cache has `withLock`, the lock shared by every process using it, the cache once more, and at last a renewal.
 * When the cache cannot be reached, the degraded mode: renew in this process alone (client credentials) or fail.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type { TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import type { Memo } from "./memo.js"
import type { Target } from "./renewal.js"
import { VANISHED_ENTRY_GRACE_MILLIS } from "@service-sdk/shared/fleetRules"
import * as State from "./state.js"

/** The wait for an entry gone under a holder of a refresh token (`shared/fleetRules.ts`, one rule for both lines). */
export const VANISHED_ENTRY_GRACE = Duration.millis(VANISHED_ENTRY_GRACE_MILLIS)

/** A ConfigurationError travels in the cache's TokenCacheError channel (see `internal/fileCache.ts`). */
const isOutage = (error: TokenCacheError) => (error as { readonly _tag: string })._tag === "TokenCacheError"

export const make = (options: {
  readonly name: string
  readonly cache: TokenCache
  readonly memo: Memo
  readonly renewNow: (
    usable: (token: TokenInfo) => boolean,
    target: Target
  ) => Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
  readonly whenCacheDown: "local" | "fail"
  readonly entryGone: "signedOut" | "keep"
}) => {
  const { cache, memo, name, renewNow } = options

  /** The cache cannot be reached: renew in this process alone, or fail, as the provider asked. */
  const degraded = (
    error: TokenCacheError,
    usable: (token: TokenInfo) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> =>
    // a cache refused for its configuration (a file cache in a directory others can write) is no outage
    options.whenCacheDown !== "local" || cache.withLock === undefined || !isOutage(error)
      ? Effect.fail(error)
      : Effect.gen(function* () {
          if (!MutableRef.get(memo.cell).cacheDown) {
            State.update(memo.cell, () => ({ cacheDown: true }))
            yield* Effect.logWarning(
              `${name}: the token cache cannot be reached (${error.message}); renewing in this process until it answers`
            )
          }
          const memoized = memo.usable(usable)
          if (Option.isSome(memoized)) return memoized.value.token.accessToken
          return yield* renewNow(usable, { _tag: "Local" })
        })

  /** Whether an empty entry should be waited for: we hold a refresh token no write of ours is pending for. */
  const vanishedUnderUs = (found: Option.Option<TokenInfo>) => {
    const state = MutableRef.get(memo.cell)
    return (
      options.entryGone === "keep" &&
      Option.isNone(found) &&
      state.unwritten === undefined &&
      Option.exists(state.memo, (entry) => entry.token.refreshToken !== undefined)
    )
  }

  /** Under the cache's `withLock`: the entry read again, then its token served, or a renewal. */
  const underLock = (usable: (token: TokenInfo) => boolean, mayWait: boolean) =>
    Effect.flatMap(memo.readCache, (found) => {
      // another process may have renewed while we waited for the cross-process lock
      const shared = memo.usable(usable)
      if (Option.isSome(shared)) return Effect.succeed(Option.some(shared.value.token.accessToken))
      if (mayWait && vanishedUnderUs(found)) return Effect.succeed(Option.none())
      return Effect.map(renewNow(usable, { _tag: "Shared", expected: found, locked: true }), Option.some)
    })

  /**
   * Runs in the flight's turn (`join.ts`), never two at once: its first look at the memo is under the local lock.
   * Written as steps, not a generator: it runs once per renewal of every provider (one step per read).
   */
  const obtain = (
    usable: (token: TokenInfo) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> =>
    Effect.suspend(() => {
      const memoized = memo.usable(usable)
      if (Option.isSome(memoized)) return Effect.succeed(memoized.value.token.accessToken)
      return Effect.matchEffect(memo.readCache, {
        onFailure: (error) => degraded(error, usable),
        onSuccess: (read) => {
          const cached = memo.usable(usable)
          if (Option.isSome(cached)) return Effect.succeed(cached.value.token.accessToken)
          const withLock = cache.withLock
          if (withLock === undefined) return renewNow(usable, { _tag: "Shared", expected: read, locked: false })
          // The shared entry is gone but we hold a refresh token: a renewal under way elsewhere may be rotating it.
          // Let go of the lock for a while (its holder stores its token), then renew only if the entry is still gone.
          // Only cache operations fail with TokenCacheError (writes of renewals never do, see `sharedWrite`).
          return withLock(underLock(usable, true)).pipe(
            Effect.flatMap(
              Option.match({
                onSome: Effect.succeed,
                onNone: () =>
                  Effect.zipRight(
                    Effect.sleep(VANISHED_ENTRY_GRACE),
                    Effect.map(withLock(underLock(usable, false)), Option.getOrThrow)
                  )
              })
            ),
            Effect.catchTag("TokenCacheError", (error) => degraded(error, usable))
          )
        }
      })
    })

  return obtain
}
