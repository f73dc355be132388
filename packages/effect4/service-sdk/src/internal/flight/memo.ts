/**
 * The memo: the newest token this process knows, fed by renewals and by reads of the shared cache.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type { TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import * as State from "./state.js"

export interface Memo {
  readonly cell: State.Cell
  /** Replaces the memo with `token` (synchronously: call it between two steps). */
  readonly remember: (token: TokenInfo) => void
  /** Drops the memo (synchronously). */
  readonly forget: () => void
  /** The memo's access token when it is fresh and `usable`, by the clock of the fiber that asks. */
  readonly usableNow: (usable: (token: TokenInfo) => boolean) => Effect.Effect<Option.Option<Redacted.Redacted<string>>>
  /**
   * The shared cache's entry as stored (the `expected` of a later compare-and-set), remembered when it is this
   * provider's and the memo holds no newer token. An empty entry is a sign-out when `entryGone` says so.
   */
  readonly readCache: Effect.Effect<Option.Option<TokenInfo>, TokenCacheError>
  /** Whether `entry` is still served at `now`: not stale, and its refresh token not rejected. */
  readonly isFresh: (entry: State.Entry, now: number) => boolean
}

export const make = (options: {
  readonly cache: TokenCache
  readonly skewMillis: number
  readonly accepts: (token: TokenInfo) => boolean
  /** "signedOut": an empty shared entry means the token was signed out (the memo is dropped); "keep": not. */
  readonly entryGone: "signedOut" | "keep"
}): Memo => {
  const { cache, skewMillis, accepts } = options
  const cell = State.make()
  const remember = (token: TokenInfo) => {
    State.update(cell, () => ({ memo: { token, staleAt: State.staleAt(token, skewMillis) } }))
  }
  const forget = () => {
    State.update(cell, () => ({ memo: undefined }))
  }
  const isFresh = (entry: State.Entry, now: number) => now < entry.staleAt && entry.token.refreshRejected !== true

  const usableNow = (usable: (token: TokenInfo) => boolean) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const memo = MutableRef.get(cell).memo
      return memo !== undefined && isFresh(memo, now) && usable(memo.token)
        ? Option.some(memo.token.accessToken)
        : Option.none()
    })

  const readCache = Effect.tap(cache.get, (found) =>
    Effect.sync(() => {
      if (Option.isNone(found)) {
        if (options.entryGone === "signedOut") forget()
        return
      }
      // a newer memo is kept, unless its refresh token was rejected (the entry may hold a new sign-in)
      const memo = MutableRef.get(cell).memo
      const newer =
        memo !== undefined && memo.token.refreshRejected !== true && memo.token.expiresAt > found.value.expiresAt
      if (accepts(found.value) && !newer) {
        remember(found.value)
      }
    })
  )

  return { cell, remember, forget, usableNow, readCache, isFresh }
}
