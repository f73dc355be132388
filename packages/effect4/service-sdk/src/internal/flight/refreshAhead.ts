/**
 * Renewal ahead of expiry: within `refreshAhead` of going stale, the first caller starts a renewal in the background
 * (in the provider's scope; the single flight's own, so callers that find the token stale meanwhile join it) and is
 * served the still-valid token. One try per token: a failure is logged and the normal path renews at staleness.
 */
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as State from "./state.js"

export const make = (options: {
  readonly name: string
  readonly cell: State.Cell
  /** 0: off. */
  readonly aheadMillis: number
  readonly scope: Scope.Scope
  readonly busy: () => boolean
  /** The renewal, joined or led as the single flight's; `other` accepts a token other than the one going stale. */
  readonly renewal: (
    other: (token: Redacted.Redacted<string>) => boolean
  ) => Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
}) => {
  const { aheadMillis, cell, name } = options

  /** Whether `entry` is due for a renewal ahead of its staleness, not tried yet, and no renewal is under way. */
  const isDue = (entry: State.Entry, now: number) =>
    aheadMillis > 0 &&
    now >= entry.staleAt - aheadMillis &&
    MutableRef.get(cell).aheadFor !== entry.token &&
    !options.busy()

  /** Starts one renewal in the background for `entry` (marked tried at once, before the fork runs). */
  const start = (entry: State.Entry) => {
    const current = entry.token
    State.update(cell, () => ({ aheadFor: current }))
    const other = (token: Redacted.Redacted<string>) => !State.same(token, current.accessToken)
    return Effect.forkIn(
      options
        .renewal(other)
        .pipe(
          Effect.catch((error) =>
            Effect.logWarning(
              `${name}: the renewal ahead of expiry failed (${error.message}); retried when the token goes stale`
            )
          )
        ),
      options.scope
    )
  }

  return { isDue, start }
}
