/**
 * Use of an `RcMap` entry (a user's state) by calls: the first call for a key takes one `RcMap.get` (one reference,
 * one scope); later calls, overlapping or not, join that hold while it is in use at least once per idle time; after
 * `idleTimeToLive` without a call, the hold is let go and the `RcMap` (made without an idle time of its own) drops
 * the entry. The bookkeeping is plain code shared by both lines (`shared/holds.ts`). A user's calls then cost no
 * lookup of the map and no scope while the user is active (an `RcMap.get` and its scope's close: ~100 µs a call).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import * as Holds from "@service-sdk/shared/holds"

interface Hold<A> {
  readonly value: A
  readonly scope: Scope.CloseableScope
}

export interface SharedHold<K, A, E> {
  /** `f` with the entry of `key`, held for as long as `f` runs, and kept for the idle time after the last call. */
  readonly use: <B, E2>(key: K, f: (value: A) => Effect.Effect<B, E2>) => Effect.Effect<B, E | E2>
  /** The entry held for `key`, read without a hold (for what needs nothing it keeps alive). */
  readonly peek: (key: K) => A | undefined
  /** Lets go of the hold for `key` (at once, or when its last call ends): its next call takes a new one. */
  readonly drop: (key: K) => Effect.Effect<void>
}

/**
 * The holds over `map`, let go of after `idleTimeToLive` without a call; their idle timers run in `scope`, and
 * closing it lets go of every hold.
 */
export const make = <K, A, E>(
  map: RcMap.RcMap<K, A, E>,
  options: { readonly idleTimeToLive: Duration.Duration; readonly scope: Scope.Scope }
): Effect.Effect<SharedHold<K, A, E>> => {
  const holds = Holds.make<K, Hold<A>>()
  const idleMillis = Duration.toMillis(options.idleTimeToLive)
  const letGo = (hold: Hold<A> | undefined) => (hold === undefined ? Effect.void : Scope.close(hold.scope, Exit.void))

  const take = (key: K): Effect.Effect<Holds.Held<K, Hold<A>>, E> =>
    Effect.flatMap(Scope.make(), (scope) =>
      RcMap.get(map, key).pipe(
        Scope.extend(scope),
        Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
        Effect.flatMap((value) => {
          const { held, kept } = holds.keep(key, { value, scope })
          return kept ? Effect.succeed(held) : Effect.as(Scope.close(scope, Exit.void), held)
        })
      )
    )

  /** Sleeps until the hold has been idle for `idleTimeToLive`, then lets go of it (unless a call came meanwhile). */
  const idleTimer = (held: Holds.Held<K, Hold<A>>): Effect.Effect<void> =>
    Effect.clockWith((clock) => {
      const next = holds.wake(held, clock.unsafeCurrentTimeMillis(), idleMillis)
      if (next === "end") return Effect.void
      if (next === "letGo") return Effect.uninterruptible(letGo(held.hold))
      return Effect.flatMap(Effect.sleep(Duration.millis(next)), () => idleTimer(held))
    })

  const release = (held: Holds.Held<K, Hold<A>>) =>
    Effect.clockWith((clock) => {
      switch (holds.leave(held, clock.unsafeCurrentTimeMillis())) {
        case "none":
          return Effect.void
        case "letGo":
          return letGo(held.hold)
        case "startTimer":
          // interruptible although forked from the caller's uninterruptible region: the scope's close ends it
          return Effect.asVoid(Effect.forkIn(Effect.interruptible(idleTimer(held)), options.scope))
      }
    })

  // in the caller's uninterruptible region already: the release is attached without a region of its own
  const use = <B, E2>(
    held: Holds.Held<K, Hold<A>>,
    restore: <X, EX, RX>(effect: Effect.Effect<X, EX, RX>) => Effect.Effect<X, EX, RX>,
    f: (value: A) => Effect.Effect<B, E2>
  ): Effect.Effect<B, E2> =>
    Effect.matchCauseEffect(restore(f(held.hold.value)), {
      onFailure: (cause) => Effect.zipRight(release(held), Effect.failCause(cause)),
      onSuccess: (value) => Effect.as(release(held), value)
    })

  return Effect.as(
    Scope.addFinalizer(
      options.scope,
      Effect.suspend(() => Effect.forEach(holds.dropAll(), letGo, { discard: true }))
    ),
    {
      use: (key, f) =>
        Effect.uninterruptibleMask((restore) => {
          // joined within the region: no interruption comes between the join and the release that matches it
          const held = holds.join(key)
          return held === undefined
            ? Effect.flatMap(take(key), (taken) => use(taken, restore, f))
            : use(held, restore, f)
        }),
      peek: (key) => holds.peek(key)?.value,
      drop: (key) => Effect.suspend(() => letGo(holds.drop(key)))
    }
  )
}
