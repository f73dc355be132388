/**
 * The `state` parameter of an authorization request (RFC 6749 §10.12): an unguessable value that ties the callback to
 * the request, against cross-site request forgery.
 */
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"

/** Bytes of randomness in a generated state: 256 bits (RFC 6749 §10.10 asks for at least 128). */
export const STATE_BYTES = 32

/** A fresh random state from the OS's cryptographic generator, base64url (43 characters, no padding). */
export const generateState: Effect.Effect<string> = Effect.sync(() => randomBytes(STATE_BYTES).toString("base64url"))
