/**
 * Use of an `RcMap` entry by calls that overlap: the calls under way for one key share one `RcMap.get` (one reference,
 * one scope), taken by the first and released by the last (the counting: `shared/holds.ts`). A burst of callers for
 * one user then costs one lookup of the map, not one each; the entry's lifetime is unchanged (it is referenced while
 * any call is under way, and its idle time starts when the last one ends).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import * as Holds from "./shared/holds.js"

interface Hold<A> {
  readonly value: A
  readonly scope: Scope.CloseableScope
}

/** `use(key, f)` and `peek(key)` over `map`. */
export const make = <K, A, E>(map: RcMap.RcMap<K, A, E>) => {
  const holds = Holds.make<K, Hold<A>>()

  const take = (key: K): Effect.Effect<Hold<A>, E> =>
    Effect.flatMap(Scope.make(), (scope) =>
      RcMap.get(map, key).pipe(
        Scope.extend(scope),
        Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
        Effect.flatMap((value) => {
          const { hold, kept } = holds.keep(key, { value, scope })
          return kept ? Effect.succeed(hold) : Effect.as(Scope.close(scope, Exit.void), hold)
        })
      )
    )

  const release = (key: K, hold: Hold<A>) =>
    Effect.suspend(() => (holds.leave(key, hold) ? Scope.close(hold.scope, Exit.void) : Effect.void))

  // in the caller's uninterruptible region already: the release is attached without a region of its own
  const use = <B, E2>(
    key: K,
    hold: Hold<A>,
    restore: <X, EX, RX>(effect: Effect.Effect<X, EX, RX>) => Effect.Effect<X, EX, RX>,
    f: (value: A) => Effect.Effect<B, E2>
  ): Effect.Effect<B, E2> =>
    Effect.matchCauseEffect(restore(f(hold.value)), {
      onFailure: (cause) => Effect.zipRight(release(key, hold), Effect.failCause(cause)),
      onSuccess: (value) => Effect.as(release(key, hold), value)
    })

  return {
    /** `f` with the entry of `key`, held for as long as `f` (or an overlapping call) runs. */
    use: <B, E2>(key: K, f: (value: A) => Effect.Effect<B, E2>): Effect.Effect<B, E | E2> =>
      Effect.uninterruptibleMask((restore) => {
        // joined within the region: no interruption comes between the join and the release that matches it
        const held = holds.join(key)
        return held === undefined
          ? Effect.flatMap(take(key), (hold) => use(key, hold, restore, f))
          : use(key, held, restore, f)
      }),
    /** The entry a call under way holds for `key`, read without a hold (for what needs nothing it keeps alive). */
    peek: (key: K): A | undefined => holds.peek(key)?.value
  }
}
