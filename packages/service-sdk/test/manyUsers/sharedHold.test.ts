/** Overlapping calls for one user share one hold on the user's state; the state lives while any call is under way. */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, RcMap } from "effect"
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
    const held = SharedHold.make(map)
    return { events, use: held.use, peek: held.peek }
  })

/** Yields until `done()` (the forked calls have started), at most 1,000 times. */
const untilTrue = (done: () => boolean) =>
  Effect.suspend(() => (done() ? Effect.void : Effect.yieldNow())).pipe(
    Effect.repeat({ until: () => done(), times: 1_000 }),
    Effect.andThen(() => expect(done()).toBe(true))
  )

describe("SharedHold", () => {
  it.scoped("overlapping calls share one entry, released when the last call ends", () =>
    Effect.gen(function* () {
      const { events, peek, use } = yield* tracked()
      const gate = yield* Deferred.make<void>()
      let started = 0
      expect(peek("a")).toBeUndefined()
      const calls = yield* Effect.forkAll(
        Array.from({ length: 5 }, () =>
          use("a", (state) =>
            Effect.zipRight(
              Effect.sync(() => started++),
              Effect.as(Deferred.await(gate), state.key)
            )
          )
        )
      )
      yield* untilTrue(() => started === 5)
      expect(events).toEqual(["acquire a"])
      // the entry the calls hold, read without a hold of its own
      expect(peek("a")).toEqual({ key: "a" })
      expect(peek("b")).toBeUndefined()
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(calls)).toEqual(["a", "a", "a", "a", "a"])
      expect(events).toEqual(["acquire a", "release a"])
      expect(peek("a")).toBeUndefined()
      // a later call takes a new hold
      expect(yield* use("a", (state) => Effect.succeed(state.key))).toBe("a")
      expect(events).toEqual(["acquire a", "release a", "acquire a", "release a"])
    })
  )

  it.scoped("a failing or interrupted call lets go of its hold; the others keep the entry", () =>
    Effect.gen(function* () {
      const { events, peek, use } = yield* tracked()
      const gate = yield* Deferred.make<void>()
      let started = 0
      expect(peek("a")).toBeUndefined()
      const waiting = yield* Effect.fork(
        use("a", () =>
          Effect.zipRight(
            Effect.sync(() => started++),
            Deferred.await(gate)
          )
        )
      )
      const interrupted = yield* Effect.fork(
        use("a", () =>
          Effect.zipRight(
            Effect.sync(() => started++),
            Effect.never
          )
        )
      )
      yield* untilTrue(() => started === 2)
      expect(yield* Effect.exit(use("a", () => Effect.fail("boom")))).toEqual(Exit.fail("boom"))
      yield* Fiber.interrupt(interrupted)
      expect(events).toEqual(["acquire a"])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(waiting)
      expect(events).toEqual(["acquire a", "release a"])
    })
  )

  it.scoped("a lookup that fails holds nothing: the next call looks up again", () =>
    Effect.gen(function* () {
      let failing = true
      const { events, use } = yield* tracked(() => failing)
      expect(yield* Effect.exit(use("a", () => Effect.void))).toEqual(Exit.fail("no a"))
      failing = false
      expect(yield* use("a", (state) => Effect.succeed(state.key))).toBe("a")
      expect(events).toEqual(["acquire a", "release a"])
    })
  )
})
