import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/**
 * An opaque random string: 32 bytes from the platform CSPRNG, base64url (43 characters).
 *
 * @internal
 */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString("base64url")

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * A stable 22-character base62 id derived from a seed (fixture ids look like the Service's ids and never change).
 *
 * @internal
 */
export const fixtureId = (seed: string): string => {
  const bytes = createHash("sha256").update(seed).digest()
  let id = ""
  for (let i = 0; i < 22; i++) {
    id += BASE62[bytes[i]! % 62]
  }
  return id
}

/**
 * Compares two secrets in time independent of where they differ.
 *
 * @internal
 */
export const secretEquals = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  return left.length === right.length && timingSafeEqual(left, right)
}
