/**
 * Proof Key for Code Exchange (RFC 7636): a one-time secret (the verifier) that binds an authorization code to the
 * program that asked for it, so that a stolen code is useless without it.
 *
 * @since 2.0.0
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Shared from "@service-sdk/shared/pkce"

/**
 * A verifier and its challenge. The verifier stays with the program (sent only in the token request); the
 * challenge goes in the authorization URL.
 *
 * @since 2.0.0
 */
export interface Pair {
  readonly verifier: Redacted.Redacted<string>
  readonly challenge: string
  readonly method: "S256"
}

/**
 * Bytes of randomness in a verifier: 256 bits, base64url-encoded to 43 characters (RFC 7636 §4.1, §7.1).
 *
 * @since 2.0.0
 */
export const VERIFIER_BYTES = Shared.VERIFIER_BYTES

/**
 * The S256 challenge of a verifier: `BASE64URL(SHA256(ASCII(verifier)))` without padding (RFC 7636 §4.2).
 *
 * @since 2.0.0
 */
export const challengeOf = (verifier: string | Redacted.Redacted<string>): string =>
  Shared.challengeOf(Redacted.isRedacted(verifier) ? Redacted.value(verifier) : verifier)

/**
 * The pair for given random bytes. `make` draws them from the OS's CSPRNG; this is for tests.
 *
 * @since 2.0.0
 */
export const fromBytes = (bytes: Uint8Array): Pair => {
  const verifier = Shared.verifierFromBytes(bytes)
  return { verifier: Redacted.make(verifier), challenge: Shared.challengeOf(verifier), method: "S256" }
}

/**
 * A fresh verifier from the OS's cryptographic generator (`Random` is not one) and its S256 challenge.
 *
 * @since 2.0.0
 */
export const make: Effect.Effect<Pair> = Effect.sync(() => {
  const verifier = Shared.randomVerifier()
  return { verifier: Redacted.make(verifier), challenge: Shared.challengeOf(verifier), method: "S256" }
})

/**
 * Whether a string is a well-formed verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
 *
 * @since 2.0.0
 */
export const isVerifier = Shared.isVerifier
