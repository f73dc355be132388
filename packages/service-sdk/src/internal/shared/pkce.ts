// Copied from packages/shared/src/pkce.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * PKCE arithmetic (RFC 7636): the verifier's alphabet and length, and its S256 challenge.
 */
import { createHash, randomBytes } from "node:crypto"

/** Bytes of randomness in a verifier: 256 bits, base64url-encoded to 43 characters (RFC 7636 §4.1, §7.1). */
export const VERIFIER_BYTES = 32

/** The S256 challenge of a verifier: `BASE64URL(SHA256(ASCII(verifier)))` without padding (RFC 7636 §4.2). */
export const challengeOf = (verifier: string): string =>
  createHash("sha256").update(verifier, "ascii").digest("base64url")

/** The verifier for given random bytes (base64url, no padding). */
export const verifierFromBytes = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url")

/** A fresh verifier from the OS's cryptographic generator. */
export const randomVerifier = (): string => verifierFromBytes(randomBytes(VERIFIER_BYTES))

/** Bytes of randomness in a generated `state`: 256 bits (RFC 6749 §10.10 asks for at least 128). */
export const STATE_BYTES = 32

/** A random `state` for an authorization request (RFC 6749 §10.12): 256 bits, base64url (43 characters). */
export const randomState = (): string => randomBytes(STATE_BYTES).toString("base64url")

/** Whether a string is a well-formed verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1). */
export const isVerifier = (value: string): boolean => /^[A-Za-z0-9\-._~]{43,128}$/.test(value)
