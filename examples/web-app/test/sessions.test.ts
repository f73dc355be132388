import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { isSessionId, memory, newSessionId } from "../src/Sessions.js"

const pending = (state: string) => ({ state, codeVerifier: Redacted.make(`verifier-${state}`) })

describe("sessions in memory", () => {
  it("session ids are 43 random base64url characters; anything else is not one", () => {
    const ids = new Set(Array.from({ length: 100 }, newSessionId))
    expect(ids.size).toBe(100)
    for (const id of ids) expect(isSessionId(id)).toBe(true)
    for (const bad of ["", "abc", `${newSessionId()}x`, "a".repeat(42), `${"a".repeat(42)}=`, `${"a".repeat(42)}/`]) {
      expect(isSessionId(bad), bad).toBe(false)
    }
  })

  it.effect("a pending sign-in is taken once, and only with its own state", () =>
    Effect.gen(function* () {
      const store = yield* memory()
      const id = newSessionId()
      yield* store.putPending(id, pending("s1"), Duration.minutes(10))
      expect(yield* store.hasPending(id)).toBe(true)
      expect(yield* store.hasPending(id)).toBe(true)
      // another state (forged, or an error callback without one) leaves it in place
      expect((yield* store.takePending(id, "s2"))._tag).toBe("StateMismatch")
      expect((yield* store.takePending(id, ""))._tag).toBe("StateMismatch")
      expect(yield* store.hasPending(id)).toBe(true)
      const taken = yield* store.takePending(id, "s1")
      expect(taken._tag).toBe("Taken")
      if (taken._tag !== "Taken") return
      expect(taken.pending.state).toBe("s1")
      expect(Redacted.value(taken.pending.codeVerifier)).toBe("verifier-s1")
      expect((yield* store.takePending(id, "s1"))._tag).toBe("NotPending")
      expect(yield* store.hasPending(id)).toBe(false)
      expect((yield* store.takePending(newSessionId(), "s1"))._tag).toBe("NotPending")
    })
  )

  it.effect("pending sign-ins and sessions expire after their TTL", () =>
    Effect.gen(function* () {
      const store = yield* memory()
      const id = newSessionId()
      yield* store.putPending(id, pending("s"), Duration.minutes(10))
      yield* store.putUser(id, "alice", Duration.hours(12))
      yield* TestClock.adjust("9 minutes")
      expect(yield* store.getUser(id)).toEqual(Option.some("alice"))
      yield* TestClock.adjust("2 minutes")
      expect((yield* store.takePending(id, "s"))._tag).toBe("NotPending")
      yield* TestClock.adjust("12 hours")
      expect(Option.isNone(yield* store.getUser(id))).toBe(true)
    })
  )

  it.effect("sessions are separate, and remove forgets both kinds of record", () =>
    Effect.gen(function* () {
      const store = yield* memory()
      const [a, b] = [newSessionId(), newSessionId()]
      yield* store.putUser(a, "alice", Duration.hours(1))
      yield* store.putUser(b, "bob", Duration.hours(1))
      yield* store.putPending(a, pending("sa"), Duration.hours(1))
      expect(yield* store.getUser(a)).toEqual(Option.some("alice"))
      expect(yield* store.getUser(b)).toEqual(Option.some("bob"))
      yield* store.remove(a)
      expect(Option.isNone(yield* store.getUser(a))).toBe(true)
      expect((yield* store.takePending(a, "sa"))._tag).toBe("NotPending")
      expect(yield* store.getUser(b)).toEqual(Option.some("bob"))
    })
  )

  it.effect("memory is bounded: past maxSessions the oldest sessions go first", () =>
    Effect.gen(function* () {
      const store = yield* memory({ maxSessions: 3 })
      const ids = Array.from({ length: 5 }, newSessionId)
      for (const [index, id] of ids.entries()) yield* store.putUser(id, `user${index}`, Duration.hours(1))
      const users = yield* Effect.forEach(ids, (id) => Effect.map(store.getUser(id), Option.getOrUndefined))
      expect(users).toEqual([undefined, undefined, "user2", "user3", "user4"])
    })
  )
})
