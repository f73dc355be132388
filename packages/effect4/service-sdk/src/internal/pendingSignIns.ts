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
import { base64Url, sha256, utf8Bytes } from "@service-sdk/shared/bytes"

/** How many pending sign-ins one provider remembers (oldest forgotten first). */
export const MEMORY = 10_000

/**
 * Whether a failed completion got the token endpoint's answer: a refusal or a malformed answer (both carry the HTTP
 * status, or name the bad token response). Callback errors (state, `error`, no code) never reached it.
 */
const answeredByTokenEndpoint = (error: unknown): boolean =>
  error instanceof AuthenticationError &&
  (error.status !== undefined || error.payload?.error === "invalid_token_response")

const usedUp = (message: string) =>
  new AuthenticationError({
    message,
    // RFC 6749 §5.2: the grant was used already
    payload: { error: "invalid_grant", error_description: "the pending authorization was completed already" }
  })

/** A memory of the sign-ins completed (or being completed) through one provider. */
export const make = () => {
  const seen = new Map<string, "completing" | "completed">()
  const keyOf = (pending: PendingInput) =>
    base64Url(sha256(utf8Bytes(`${String(pending?.state)}\u0000${secretValue(pending?.codeVerifier) ?? ""}`)))

  /** Runs `complete` once per pending sign-in; a second completion fails at once, without a request. */
  const once = <A, E, R>(
    pending: PendingInput,
    complete: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | AuthenticationError, R> =>
    Effect.suspend((): Effect.Effect<A, E | AuthenticationError, R> => {
      const key = keyOf(pending)
      const known = seen.get(key)
      if (known !== undefined) {
        return Effect.fail(
          usedUp(
            known === "completed"
              ? "this sign-in was completed already: a pending authorization is single-use"
              : "this sign-in is being completed already: a pending authorization is single-use"
          )
        )
      }
      seen.set(key, "completing")
      if (seen.size > MEMORY) seen.delete(seen.keys().next().value!)
      return Effect.onExit(complete, (exit) =>
        Effect.sync(() => {
          const definitive =
            Exit.isSuccess(exit) || Option.exists(Cause.findErrorOption(exit.cause), answeredByTokenEndpoint)
          if (definitive) seen.set(key, "completed")
          else seen.delete(key)
        })
      )
    })

  return { once }
}
