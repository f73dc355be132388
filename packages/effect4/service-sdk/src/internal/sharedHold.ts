/**
 * Use of an `RcMap` entry by calls that overlap: the calls under way for one key share one `RcMap.get` (one reference,
 * one scope), taken by the first and released by the last. A burst of callers for one user then costs one lookup of
 * the map, not one each; the entry's lifetime is unchanged (it is referenced while any call is under way, and its
 * idle time starts when the last one ends). The Effect 3 line has the same module.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"

interface Hold<A> {
  readonly value: A
  readonly scope: Scope.Closeable
  calls: number
}

/** `use(key, f)`: `f` with the entry of `key`, held for as long as `f` (or an overlapping call) runs. */
export const make = <K, A, E>(map: RcMap.RcMap<K, A, E>) => {
  const holds = new Map<K, Hold<A>>()

  const release = (key: K, hold: Hold<A>) =>
    Effect.suspend(() => {
      hold.calls--
      if (hold.calls > 0) return Effect.void
      if (holds.get(key) === hold) holds.delete(key)
      return Scope.close(hold.scope, Exit.void)
    })

  const acquire = (key: K): Effect.Effect<Hold<A>, E> =>
    Effect.suspend(() => {
      const held = holds.get(key)
      if (held !== undefined) {
        held.calls++
        return Effect.succeed(held)
      }
      return Effect.flatMap(Scope.make(), (scope) =>
        RcMap.get(map, key).pipe(
          Scope.provide(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
          Effect.flatMap((value) => {
            // another first caller took a hold while this one waited for the entry: join it, drop this reference
            const other = holds.get(key)
            if (other !== undefined) {
              other.calls++
              return Effect.as(Scope.close(scope, Exit.void), other)
            }
            const hold: Hold<A> = { value, scope, calls: 1 }
            holds.set(key, hold)
            return Effect.succeed(hold)
          })
        )
      )
    })

  return <B, E2>(key: K, f: (value: A) => Effect.Effect<B, E2>): Effect.Effect<B, E | E2> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(acquire(key), (hold) => Effect.ensuring(restore(f(hold.value)), release(key, hold)))
    )
}
