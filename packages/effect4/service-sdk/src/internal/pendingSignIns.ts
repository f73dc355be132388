/**
 * The single use of pending sign-ins: a pending sign-in is used up by the token endpoint's answer to its code. A
 * bounded memory (oldest forgotten first) of a digest of each one (never kept in clear); it is claimed while its code
 * is exchanged and released when the token endpoint gave no definitive answer (a transport failure, a 5xx), so the same
 * callback can be completed again then.
 */
import type { PendingInput } from "../OAuthClient.js"
import { secretValue } from "./config.js"
import { base64Url, sha256, utf8Bytes } from "@service-sdk/shared/bytes"

/** How many completed sign-ins an `OAuthClient` remembers, to refuse a second completion of the same one. */
export const MEMORY = 10_000

/** A memory of the sign-ins completed (or being completed) through one client; only digests are kept. */
export const make = () => {
  const seen = new Set<string>()
  const keyOf = (pending: PendingInput) =>
    base64Url(sha256(utf8Bytes(`${pending.state}\u0000${secretValue(pending.codeVerifier) ?? ""}`)))
  return {
    /** The key of `pending`, claimed; undefined when it is claimed already (completed, or being completed). */
    claim: (pending: PendingInput): string | undefined => {
      const key = keyOf(pending)
      if (seen.has(key)) return undefined
      seen.add(key)
      if (seen.size > MEMORY) seen.delete(seen.values().next().value!)
      return key
    },
    release: (key: string) => {
      seen.delete(key)
    }
  }
}
