/**
 * The shared outcome: callers that arrive while a renewal runs wait for it together and get its token, or its
 * failure, all at once (the next call after that renews again). When it was interrupted they go on: one of them
 * renews.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as State from "./state.js"

/** A waiter's wait for a renewal: its own fiber subscribes to the promise (its `then`), so it resumes from there. */
const awaitOutcome = (running: State.Renewing): Effect.Effect<State.Outcome> => Effect.promise(() => running.outcome)

export const make = (cell: State.Cell) => {
  /**
   * Joins the renewal under way, or runs `renewal` as the one others join. `accept`: is its token good for us?
   * Only the leader allocates (its promise, its uninterruptible region): a joiner just awaits the leader's.
   */
  const joinOrLead = (
    renewal: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>,
    accept: (token: Redacted.Redacted<string>) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> => {
    const join = (running: State.Renewing) =>
      Effect.flatMap(awaitOutcome(running), (outcome) =>
        Option.isSome(outcome) && (Exit.isFailure(outcome.value) || accept(outcome.value.value)) ? outcome.value : self
      )
    const lead = Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        // the fiber may have yielded since it looked: another caller may lead by now
        const running = MutableRef.get(cell).renewing
        if (running !== undefined) return restore(join(running))
        let settle!: (outcome: State.Outcome) => void
        const mine: State.Renewing = {
          outcome: new Promise((resolve) => {
            settle = resolve
          })
        }
        State.update(cell, () => ({ renewing: mine }))
        return Effect.onExit(restore(renewal), (exit) =>
          Effect.sync(() => {
            State.update(cell, (state) => (state.renewing === mine ? { renewing: undefined } : {}))
            const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
            settle(interrupted ? Option.none() : Option.some(exit))
          })
        )
      })
    )
    const self: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> = Effect.suspend(() => {
      const running = MutableRef.get(cell).renewing
      return running === undefined ? lead : join(running)
    })
    return self
  }

  /** Whether a renewal is under way. */
  const busy = () => MutableRef.get(cell).renewing !== undefined

  /**
   * The renewal under way, awaited, for a caller that takes any token it brings: its token or its failure; `otherwise`
   * when it was interrupted. Undefined when none is under way.
   */
  const awaitUnderWay = (
    otherwise: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> | undefined => {
    const running = MutableRef.get(cell).renewing
    return running === undefined
      ? undefined
      : Effect.flatMap(awaitOutcome(running), (outcome) => (Option.isSome(outcome) ? outcome.value : otherwise))
  }

  return { joinOrLead, busy, awaitUnderWay }
}
