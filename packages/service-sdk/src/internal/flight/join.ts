/**
 * The flight's turn, its only lock in this process: one renewal (or a sign-in's store, a sign-out) at a time. Callers
 * that arrive while a renewal runs wait for it together and get its token, or its failure, all at once (the next call
 * after that renews again). When it was interrupted they go on: one of them renews.
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

/** A renewal's exit as its waiters get it: none when it was interrupted (they go on: one of them renews). */
const shared = (exit: Exit.Exit<Redacted.Redacted<string>, State.TokenFailure>): State.Outcome =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? Option.none() : Option.some(exit)

export const make = (cell: State.Cell) => {
  /**
   * Runs `work` as the one under way (the flight's turn: one at a time), or, when another is under way, `whenBusy`
   * with it. Callers that arrive meanwhile await its promise, settled with `outcomeOf` its exit. Only the leader
   * allocates (its promise, its uninterruptible region).
   */
  const leading = <A, E>(
    work: Effect.Effect<A, E>,
    outcomeOf: (exit: Exit.Exit<A, E>) => State.Outcome,
    whenBusy: (running: State.Renewing) => Effect.Effect<A, E>
  ): Effect.Effect<A, E> =>
    Effect.uninterruptibleMask((restore) => {
      // the fiber may have yielded since it looked: another caller may lead by now
      const running = MutableRef.get(cell).renewing
      if (running !== undefined) return restore(whenBusy(running))
      let settle!: (outcome: State.Outcome) => void
      const mine: State.Renewing = {
        outcome: new Promise((resolve) => {
          settle = resolve
        })
      }
      State.update(cell, () => ({ renewing: mine }))
      // the turn ends in the continuation itself, still uninterruptible: no step of its own
      const end = (exit: Exit.Exit<A, E>) => {
        State.update(cell, (state) => (state.renewing === mine ? { renewing: undefined } : {}))
        settle(outcomeOf(exit))
        return exit
      }
      return Effect.matchCauseEffect(restore(work), {
        onFailure: (cause) => end(Exit.failCause(cause)),
        onSuccess: (value) => end(Exit.succeed(value))
      })
    })

  /**
   * Joins the renewal under way, or runs `renewal` as the one others join. `accept`: is its token good for us?
   * A joiner just awaits the leader's promise.
   */
  const joinOrLead = (
    renewal: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>,
    accept: (token: Redacted.Redacted<string>) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> => {
    const join = (running: State.Renewing) =>
      Effect.flatMap(awaitOutcome(running), (outcome) =>
        Option.isSome(outcome) && (Exit.isFailure(outcome.value) || accept(outcome.value.value)) ? outcome.value : self
      )
    const lead = leading(renewal, shared, join)
    const self: Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> = Effect.suspend(() => {
      const running = MutableRef.get(cell).renewing
      return running === undefined ? lead : join(running)
    })
    return self
  }

  /**
   * `work` in the flight's turn, as a renewal would run (a sign-in's store, a sign-out): after the renewal under way,
   * before the next. Callers that arrive meanwhile wait for it, then go on (one of them renews if it must).
   */
  const exclusive = <A, E>(work: Effect.Effect<A, E>): Effect.Effect<A, E> => {
    const self: Effect.Effect<A, E> = leading(
      work,
      () => Option.none(),
      (running) => Effect.flatMap(awaitOutcome(running), () => self)
    )
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

  return { joinOrLead, exclusive, busy, awaitUnderWay }
}
