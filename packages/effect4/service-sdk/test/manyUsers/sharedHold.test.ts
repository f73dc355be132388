/** Overlapping calls for one user share one hold on the user's state; the state lives while any call is under way. */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as RcMap from "effect/RcMap"
import * as SharedHold from "../../src/internal/sharedHold.js"

/** An RcMap whose entries are released at once when unused, recording lookups and releases. */
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
    return { events, use: SharedHold.make(map) }
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
  it.effect("overlapping calls share one entry, released when the last call ends", () =>
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
      expect(events).toEqual(["acquire a", "release a"])
      // a later call takes a new hold
      expect(yield* use("a", (state) => Effect.succeed(state.key))).toBe("a")
      expect(events).toEqual(["acquire a", "release a", "acquire a", "release a"])
    }).pipe(Effect.scoped)
  )

  it.effect("a failing or interrupted call lets go of its hold; the others keep the entry", () =>
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
      expect(events).toEqual(["acquire a", "release a"])
    }).pipe(Effect.scoped)
  )
})
