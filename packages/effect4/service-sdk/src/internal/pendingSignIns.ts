/**
 * The single use of pending sign-ins, kept by the provider that completes them (ownership, not the protocol): a
 * pending sign-in is used up only by a definitive answer of the token endpoint (a token, or a refusal). After a
 * transport failure, a 5xx, a bad option or an interruption, the same callback can be completed again (DESIGN
 * section 4, "Callback URLs"); a forged callback (a wrong state) uses nothing up. Only digests are kept.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { PendingInput } from "../OAuthClient.js"
import { AuthenticationError } from "../ServiceError.js"
import { secretValue } from "./config.js"
import * as Memory from "@service-sdk/shared/pendingSignIns"

/** A memory of the sign-ins completed (or being completed) through one provider; only digests are kept. */
export const make = () => {
  const memory = Memory.memory()

  /** Runs `complete` once per pending sign-in; a second completion fails at once, without a request. */
  const once = <A, E, R>(
    pending: PendingInput,
    complete: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | AuthenticationError, R> =>
    Effect.suspend((): Effect.Effect<A, E | AuthenticationError, R> => {
      const key = Memory.keyOf(pending?.state, secretValue(pending?.codeVerifier))
      const known = memory.claim(key)
      if (known !== undefined) return Effect.fail(new AuthenticationError(Memory.usedUp(known)))
      return Effect.onExit(complete, (exit) =>
        Effect.sync(() =>
          memory.settle(
            key,
            Exit.isSuccess(exit) || Option.exists(Cause.findErrorOption(exit.cause), Memory.answeredByTokenEndpoint)
          )
        )
      )
    })

  return { once }
}
