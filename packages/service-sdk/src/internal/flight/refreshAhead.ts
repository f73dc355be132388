/**
 * Renewal ahead of expiry: within `refreshAhead` of going stale, the first caller starts a renewal in the background
 * (in the provider's scope; the single flight's own, so callers that find the token stale meanwhile join it) and is
 * served the still-valid token. One try per token: a failure is logged and the normal path renews at staleness.
 */
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type { TokenInfo } from "../../TokenInfo.js"
import * as State from "./state.js"

export const make = (options: {
  readonly name: string
  readonly cell: State.Cell
  readonly aheadMillis: number
  readonly skewMillis: number
  readonly scope: Scope.Scope
  readonly busy: () => boolean
  /** The renewal, for a token that goes stale later than `staleAt`. */
  readonly renewal: (
    usable: (token: TokenInfo) => boolean
  ) => Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
}) => {
  const { aheadMillis, cell, name, skewMillis } = options

  /** Whether `entry` is due for a renewal ahead of its staleness that was not tried yet. */
  const isDue = (entry: State.Entry, now: number) =>
    aheadMillis > 0 && now >= entry.staleAt - aheadMillis && MutableRef.get(cell).aheadFor !== entry.token

  /** Starts the renewal ahead of `entry`'s staleness in the background, unless a renewal is under way. */
  const start = (entry: State.Entry): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (MutableRef.get(cell).aheadFor === entry.token) return Effect.void
      State.update(cell, () => ({ aheadFor: entry.token }))
      if (options.busy()) return Effect.void
      // a newer token will do: one another process stored in a shared cache included
      const renewal = options
        .renewal((token) => State.staleAt(token, skewMillis) > entry.staleAt)
        .pipe(
          Effect.catchAll((error) =>
            Effect.logWarning(
              `${name}: the renewal ahead of expiry failed (${error.message}); the token will be renewed when it goes stale`
            )
          )
        )
      return Effect.asVoid(Effect.forkIn(renewal, options.scope))
    })

  return { isDue, start }
}
