/**
 * The `state` parameter of an authorization request (RFC 6749 §10.12): an unguessable value that ties the callback to
 * the request, against cross-site request forgery.
 */
import * as Effect from "effect/Effect"
import { randomState } from "@service-sdk/shared/pkce"

/** Bytes of randomness in a generated state (`shared/pkce.ts`, one rule for both lines). */
export { STATE_BYTES } from "@service-sdk/shared/pkce"

/** A fresh random state from the OS's cryptographic generator, base64url (43 characters, no padding). */
export const generateState: Effect.Effect<string> = Effect.sync(randomState)
