/**
 * A user's calls share one hold on the user's state: taken by the first call, kept while calls come at least once per
 * idle time, let go of after the idle time without a call (then the `RcMap` drops the state), or at once by `drop`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import * as SharedHold from "../../src/internal/sharedHold.js"

/** An RcMap whose entries are released at once when unused, recording lookups and releases, under shared holds. */
const tracked = (fail?: (key: string) => boolean) =>
  Effect.gen(function* () {
    const events: Array<string> = []
    const map = yield* RcMap.make({
      lookup: (key: string) =>
        fail?.(key)
          ? Effect.fail(`no ${key}`)
          : Effect.acquireRelease(
              Effect.sync(() => {
                events.push(`acquire ${key}`)
                return { key }
              }),
              () => Effect.sync(() => events.push(`release ${key}`))
            )
    })
    const scope = yield* Scope.make()
    const held = yield* SharedHold.make(map, { idleTimeToLive: Duration.minutes(1), scope })
    return { events, scope, ...held }
  })

/** Yields until `done()` (the forked calls have started), at most 1,000 times. */
const untilTrue = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_000 && !done(); i++) yield* Effect.yieldNow
    expect(done()).toBe(true)
  })

const started = () => {
  let count = 0
  return { mark: Effect.sync(() => void count++), count: () => count }
}

describe("SharedHold", () => {
  it.effect("overlapping calls share one entry; it is kept for the idle time after the last call, then let go", () =>
    Effect.gen(function* () {
      const { events, use } = yield* tracked()
      const gate = yield* Deferred.make<void>()
      const calls = started()
      const fibers = yield* Effect.forEach(Array.from({ length: 5 }), () =>
        Effect.forkChild(
          use("a", (state) => calls.mark.pipe(Effect.andThen(Deferred.await(gate)), Effect.as(state.key)))
        )
      )
      yield* untilTrue(() => calls.count() === 5)
      expect(events).toEqual(["acquire a"])
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.joinAll(fibers)).toEqual(["a", "a", "a", "a", "a"])
      // idle, still held: a later call joins it
      expect(events).toEqual(["acquire a"])
      yield* TestClock.adjust("59 seconds")
      expect(yield* use("a", (state) => Effect.succeed(state.key))).toBe("a")
      expect(events).toEqual(["acquire a"])
      // a minute after that call, the hold is let go and the map drops the entry
      yield* TestClock.adjust("59 seconds")
      expect(events).toEqual(["acquire a"])
      yield* TestClock.adjust("1 second")
      expect(events).toEqual(["acquire a", "release a"])
      // a later call takes a new hold
      expect(yield* use("a", (state) => Effect.succeed(state.key))).toBe("a")
      expect(events).toEqual(["acquire a", "release a", "acquire a"])
    }).pipe(Effect.scoped)
  )

  it.effect("a call under way keeps the entry past the idle time; the idle time starts when it ends", () =>
    Effect.gen(function* () {
      const { events, use } = yield* tracked()
      yield* use("a", () => Effect.void)
      const gate = yield* Deferred.make<void>()
      const long = yield* Effect.forkChild(use("a", () => Deferred.await(gate)))
      yield* TestClock.adjust("5 minutes")
      expect(events).toEqual(["acquire a"])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(long)
      yield* TestClock.adjust("59 seconds")
      expect(events).toEqual(["acquire a"])
      yield* TestClock.adjust("1 second")
      expect(events).toEqual(["acquire a", "release a"])
    }).pipe(Effect.scoped)
  )

  it.effect("a failing or interrupted call ends its use; the entry is let go after the idle time all the same", () =>
    Effect.gen(function* () {
      const { events, use } = yield* tracked()
      const gate = yield* Deferred.make<void>()
      const calls = started()
      const waiting = yield* Effect.forkChild(use("a", () => calls.mark.pipe(Effect.andThen(Deferred.await(gate)))))
      const interrupted = yield* Effect.forkChild(use("a", () => calls.mark.pipe(Effect.andThen(Effect.never))))
      yield* untilTrue(() => calls.count() === 2)
      expect(yield* Effect.exit(use("a", () => Effect.fail("boom")))).toEqual(Exit.fail("boom"))
      yield* Fiber.interrupt(interrupted)
      expect(events).toEqual(["acquire a"])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(waiting)
      expect(events).toEqual(["acquire a"])
      yield* TestClock.adjust("1 minute")
      expect(events).toEqual(["acquire a", "release a"])
    }).pipe(Effect.scoped)
  )

  it.effect("a lookup that fails holds nothing: the next call looks up again", () =>
    Effect.gen(function* () {
      let failing = true
      const { events, use } = yield* tracked(() => failing)
      expect(yield* Effect.exit(use("a", () => Effect.void))).toEqual(Exit.fail("no a"))
      failing = false
      expect(yield* use("a", (state) => Effect.succeed(state.key))).toBe("a")
      expect(events).toEqual(["acquire a"])
    }).pipe(Effect.scoped)
  )

  it.effect("drop lets go of an idle hold at once, of a hold in use when its last call ends", () =>
    Effect.gen(function* () {
      const { drop, events, use } = yield* tracked()
      yield* use("a", () => Effect.void)
      yield* drop("a")
      expect(events).toEqual(["acquire a", "release a"])
      const gate = yield* Deferred.make<void>()
      const calls = started()
      const call = yield* Effect.forkChild(use("a", () => calls.mark.pipe(Effect.andThen(Deferred.await(gate)))))
      yield* untilTrue(() => calls.count() === 1)
      yield* drop("a")
      expect(events).toEqual(["acquire a", "release a", "acquire a"])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(call)
      expect(events).toEqual(["acquire a", "release a", "acquire a", "release a"])
      // the idle timer of a dropped hold lets nothing go twice
      yield* TestClock.adjust("2 minutes")
      expect(events).toEqual(["acquire a", "release a", "acquire a", "release a"])
    }).pipe(Effect.scoped)
  )

  it.effect("closing the holds' scope lets go of every idle hold", () =>
    Effect.gen(function* () {
      const { events, scope, use } = yield* tracked()
      yield* use("a", () => Effect.void)
      yield* use("b", () => Effect.void)
      expect(events).toEqual(["acquire a", "acquire b"])
      yield* Scope.close(scope, Exit.void)
      expect([...events].sort()).toEqual(["acquire a", "acquire b", "release a", "release b"])
    }).pipe(Effect.scoped)
  )
})
