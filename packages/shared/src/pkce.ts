/**
 * PKCE arithmetic (RFC 7636): the verifier's alphabet and length, and its S256 challenge.
 */
import { base64Url, randomBytes, sha256 } from "./bytes.js"

/** The verifier's bytes as US-ASCII (RFC 7636 §4.2; Node's "ascii" encoding: the low byte of each code unit). */
const asciiBytes = (text: string): Uint8Array => {
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff
  return bytes
}

/** Bytes of randomness in a verifier: 256 bits, base64url-encoded to 43 characters (RFC 7636 §4.1, §7.1). */
export const VERIFIER_BYTES = 32

/** The S256 challenge of a verifier: `BASE64URL(SHA256(ASCII(verifier)))` without padding (RFC 7636 §4.2). */
export const challengeOf = (verifier: string): string => base64Url(sha256(asciiBytes(verifier)))

/** The verifier for given random bytes (base64url, no padding). */
export const verifierFromBytes = (bytes: Uint8Array): string => base64Url(bytes)

/** A fresh verifier from the OS's cryptographic generator. */
export const randomVerifier = (): string => verifierFromBytes(randomBytes(VERIFIER_BYTES))

/** Bytes of randomness in a generated `state`: 256 bits (RFC 6749 §10.10 asks for at least 128). */
export const STATE_BYTES = 32

/** A random `state` for an authorization request (RFC 6749 §10.12): 256 bits, base64url (43 characters). */
export const randomState = (): string => base64Url(randomBytes(STATE_BYTES))

/** Whether a string is a well-formed verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1). */
export const isVerifier = (value: string): boolean => /^[A-Za-z0-9\-._~]{43,128}$/.test(value)
