/**
 * The memo: the newest token this process knows, fed by renewals and by reads of the shared cache.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type { TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import * as State from "./state.js"

export interface Memo {
  readonly cell: State.Cell
  /** Replaces the memo with `token`. */
  readonly remember: (token: TokenInfo) => Effect.Effect<void>
  /** {@link remember}, done synchronously (in a step that runs anyway). */
  readonly keep: (token: TokenInfo) => void
  readonly forget: Effect.Effect<void>
  /** The memo when it is fresh and `usable`, read synchronously (in a step that runs anyway). */
  readonly usable: (usable: (token: TokenInfo) => boolean) => Option.Option<State.Entry>
  /**
   * The shared cache's entry as stored (the `expected` of a later compare-and-set), remembered when it is this
   * provider's and the memo holds no newer token. An empty entry is a sign-out when `entryGone` says so.
   */
  readonly readCache: Effect.Effect<Option.Option<TokenInfo>, TokenCacheError>
  readonly isFresh: (entry: State.Entry, now: number) => boolean
}

export const make = (options: {
  readonly name: string
  readonly cache: TokenCache
  readonly clock: Clock.Clock
  readonly skewMillis: number
  readonly accepts: (token: TokenInfo) => boolean
  /** "signedOut": an empty shared entry means the token was signed out (the memo is dropped); "keep": not. */
  readonly entryGone: "signedOut" | "keep"
}): Memo => {
  const { cache, clock, skewMillis, accepts, name } = options
  const cell = State.make()
  const entryOf = (token: TokenInfo): State.Entry => ({ token, staleAt: State.staleAt(token, skewMillis) })
  const keep = (token: TokenInfo) => State.update(cell, () => ({ memo: Option.some(entryOf(token)) }))
  const remember = (token: TokenInfo) => Effect.sync(() => keep(token))
  const forget = Effect.sync(() => State.update(cell, () => ({ memo: Option.none() })))
  const isFresh = (entry: State.Entry, now: number) => now < entry.staleAt

  // one step after the read (it runs twice per renewal): the memo is fed synchronously
  const readCache = Effect.flatMap(cache.get, (found) => {
    const state = MutableRef.get(cell)
    if (Option.isNone(found)) {
      if (options.entryGone === "signedOut" && state.unwritten === undefined) {
        State.update(cell, () => ({ memo: Option.none() }))
      }
    } else {
      const newer = Option.exists(state.memo, (entry) => entry.token.expiresAt > found.value.expiresAt)
      if (accepts(found.value) && !newer) {
        State.update(cell, () => ({ memo: Option.some(entryOf(found.value)) }))
      }
    }
    if (!MutableRef.get(cell).cacheDown) return Effect.succeed(found)
    State.update(cell, () => ({ cacheDown: false }))
    return Effect.as(Effect.logInfo(`${name}: the token cache answers again; renewals are shared again`), found)
  })

  // the clock read synchronously (as `getAccessToken` does)
  const usableEntry = (usable: (token: TokenInfo) => boolean) => {
    const now = clock.unsafeCurrentTimeMillis()
    return Option.filter(MutableRef.get(cell).memo, (found) => isFresh(found, now) && usable(found.token))
  }

  return { cell, remember, keep, forget, usable: usableEntry, readCache, isFresh }
}
