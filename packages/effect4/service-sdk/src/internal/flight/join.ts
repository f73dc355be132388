/**
 * The flight's turn, its only lock in this process: one renewal (or a sign-in's store, a sign-out) at a time. Callers
 * that arrive while a renewal runs wait for it together and get its token, or its failure, all at once (the next call
 * after that renews again). When it was interrupted they go on: one of them renews.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as MutableRef from "effect/MutableRef"
import type * as Redacted from "effect/Redacted"
import * as State from "./state.js"

/** A joinable renewal: `self` joins the one under way or leads one; `enter` is the same, without `suspend`. */
export interface Joinable {
  readonly self: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
  /** What to run now: join the renewal under way, or lead one. */
  readonly enter: () => Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
}

export const make = (
  cell: State.Cell,
  /** What each waiter of an interrupted renewal runs (the single flight's stale path: the first leads the next). */
  again: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
) => {
  /**
   * Joins the renewal under way (its outcome shared: a failure fails every waiter at once), or leads one running
   * `work`. A renewal that was interrupted lets a waiter lead the next one; a joined token that is not `usable` (the
   * one a 401 rejected) makes the caller lead another; `usable` undefined: any token of the renewal will do (a joiner
   * then only awaits it).
   */
  /**
   * Runs `work` as the one under way (the flight's turn: one at a time), or, when another is under way, `whenBusy`
   * with it. Callers that arrive meanwhile await its promise, settled with `outcomeOf` its exit. Only the leader
   * allocates (its promise, its uninterruptible region).
   */
  const leading = <A, E>(
    work: Effect.Effect<A, E>,
    outcomeOf: (exit: Exit.Exit<A, E>) => Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>,
    whenBusy: (running: State.Renewing) => Effect.Effect<A, E>
  ): Effect.Effect<A, E> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        // the fiber may have yielded since it looked: another caller may lead by now
        const other = MutableRef.get(cell).renewing
        if (other !== undefined) return yield* restore(whenBusy(other))
        let settle!: (outcome: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>) => void
        const running: State.Renewing = {
          outcome: new Promise((resolve) => {
            settle = resolve
          })
        }
        State.update(cell, () => ({ renewing: running }))
        const exit = yield* Effect.exit(restore(work))
        State.update(cell, (state) => (state.renewing === running ? { renewing: undefined } : {}))
        settle(outcomeOf(exit))
        return yield* exit
      })
    )

  /**
   * `work` in the flight's turn, as a renewal would run (a sign-in's store, a sign-out): after the renewal under way,
   * before the next. Callers that arrive meanwhile wait for it, then go on (`again`: one of them renews if it must).
   */
  const exclusive = <A, E>(work: Effect.Effect<A, E>): Effect.Effect<A, E> => {
    const self: Effect.Effect<A, E> = leading(
      work,
      () => again,
      (running) =>
        Effect.andThen(
          Effect.promise(() => running.outcome),
          Effect.suspend(() => self)
        )
    )
    return self
  }

  const joinOrLeadWith = (
    work: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>,
    usable: ((token: Redacted.Redacted<string>) => boolean) | undefined
  ): Joinable => {
    const lead = leading(
      work,
      (exit) => (Exit.hasInterrupts(exit) ? again : exit),
      (other) => join(other)
    )
    // a herd's joiners share one effect per renewal: nothing is made per caller
    let joined:
      | {
          readonly running: State.Renewing
          readonly effect: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
        }
      | undefined
    const join = (running: State.Renewing): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> => {
      if (joined === undefined || joined.running !== running) {
        // each waiter's fiber subscribes to the promise itself (its `then`), so it resumes in its own context
        const outcome = Effect.flatten(Effect.promise(() => running.outcome))
        const effect =
          usable === undefined
            ? outcome
            : Effect.flatMap(outcome, (token) => (usable(token) ? Effect.succeed(token) : self))
        joined = { running, effect }
      }
      return joined.effect
    }
    const enter = (): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> => {
      const running = MutableRef.get(cell).renewing
      return running === undefined ? lead : join(running)
    }
    const self: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> = Effect.suspend(enter)
    return { self, enter }
  }

  const joinOrLead = (
    work: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>,
    usable: ((token: Redacted.Redacted<string>) => boolean) | undefined
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> => joinOrLeadWith(work, usable).self

  /** Whether a renewal is under way. */
  const busy = () => MutableRef.get(cell).renewing !== undefined

  return { joinOrLeadWith, joinOrLead, exclusive, busy }
}
