/**
 * `joinUnderWay`: how `UserTokens`' callers that arrive during their user's renewal wait for it without a hold of
 * their own. It must do exactly what `getAccessToken` does for them (await the renewal under way, take its token or
 * its failure) and nothing when there is no such renewal; an interrupted renewal hands them to `otherwise`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Option, Redacted } from "effect"
import { AuthenticationError, TokenCache, TokenInfo } from "@service-sdk/effect"
import * as SingleFlight from "../../src/internal/singleFlight.js"

const token = (name: string, expiresAt: number) => new TokenInfo({ accessToken: Redacted.make(name), expiresAt })

/** A flight over a memory cache holding `initial`, whose renewals wait for `gate`. */
const gatedFlight = (initial: TokenInfo) =>
  Effect.gen(function* () {
    const gate = yield* Deferred.make<TokenInfo, AuthenticationError>()
    const renewals = { count: 0 }
    const flight = yield* SingleFlight.make({
      name: "Test",
      cache: yield* TokenCache.memory(initial),
      skew: Duration.seconds(1),
      clock: yield* Effect.clock,
      renew: () =>
        Effect.suspend(() => {
          renewals.count++
          return Deferred.await(gate)
        }),
      scope: yield* Effect.scope
    })
    // a leader whose renewal is under way (waiting for the gate)
    const lead = Effect.gen(function* () {
      const leader = yield* Effect.fork(flight.getAccessToken)
      for (let i = 0; i < 100 && renewals.count === 0; i++) yield* Effect.yieldNow()
      expect(renewals.count).toBe(1)
      return leader
    })
    return { flight, gate, renewals, lead }
  })

const never = Effect.die("otherwise must not run")
const text = (secret: Redacted.Redacted<string>) => Redacted.value(secret)

describe("joinUnderWay", () => {
  it.scoped("is undefined while the token is fresh, and when no renewal is under way", () =>
    Effect.gen(function* () {
      const fresh = yield* gatedFlight(token("fresh", 3600))
      expect(text(yield* fresh.flight.getAccessToken)).toBe("fresh")
      expect(fresh.flight.joinUnderWay(never)).toBeUndefined()
      const stale = yield* gatedFlight(token("stale", -10))
      expect(stale.flight.joinUnderWay(never)).toBeUndefined()
      expect(stale.renewals.count).toBe(0)
    })
  )

  it.scoped("during a renewal of a stale token: that renewal's token, without a renewal of its own", () =>
    Effect.gen(function* () {
      const { flight, gate, renewals, lead } = yield* gatedFlight(token("stale", -10))
      const leader = yield* lead
      const joined = flight.joinUnderWay(never)
      expect(joined).toBeDefined()
      const joiner = yield* Effect.fork(joined!)
      yield* Deferred.succeed(gate, token("renewed", 3600))
      expect(text(yield* Fiber.join(joiner))).toBe("renewed")
      expect(text(yield* Fiber.join(leader))).toBe("renewed")
      expect(renewals.count).toBe(1)
    })
  )

  it.scoped("a renewal that fails: the same failure", () =>
    Effect.gen(function* () {
      const { flight, gate, lead } = yield* gatedFlight(token("stale", -10))
      const leader = yield* lead
      const joiner = yield* Effect.fork(flight.joinUnderWay(never)!)
      yield* Deferred.fail(gate, new AuthenticationError({ message: "refused" }))
      const exit = yield* Fiber.await(joiner)
      expect(Exit.isFailure(exit) && Option.getOrThrow(Cause.failureOption(exit.cause)).message).toBe("refused")
      expect(Exit.isFailure(yield* Fiber.await(leader))).toBe(true)
    })
  )

  it.scoped("a renewal that is interrupted: `otherwise` runs", () =>
    Effect.gen(function* () {
      const { flight, lead } = yield* gatedFlight(token("stale", -10))
      const leader = yield* lead
      const joiner = yield* Effect.fork(flight.joinUnderWay(Effect.succeed(Redacted.make("otherwise")))!)
      yield* Fiber.interrupt(leader)
      expect(text(yield* Fiber.join(joiner))).toBe("otherwise")
    })
  )
})
