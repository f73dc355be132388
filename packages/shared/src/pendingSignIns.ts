/**
 * The single use of pending sign-ins (both lines' `internal/pendingSignIns.ts` run their Effect around it): a bounded
 * memory (oldest forgotten first) of a digest per pending sign-in, claimed while it is completed and kept only when
 * the token endpoint gave a definitive answer (DESIGN section 4, "Callback URLs").
 */
import { base64Url, sha256, utf8Bytes } from "./bytes.js"

/** How many pending sign-ins one provider remembers. */
export const MEMORY = 10_000

/** A pending sign-in as its owner takes it back: its state and verifier (the verifier's plain value). */
export const keyOf = (state: unknown, verifier: string | undefined): string =>
  base64Url(sha256(utf8Bytes(`${String(state)}\u0000${verifier ?? ""}`)))

/**
 * Whether a failed completion got the token endpoint's answer: a refusal or a malformed answer (both carry the HTTP
 * status, or name the bad token response). Callback errors (state, `error`, no code) never reached it.
 */
export const answeredByTokenEndpoint = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const { _tag, payload, status } = error as {
    readonly _tag?: unknown
    readonly status?: unknown
    readonly payload?: { readonly error?: unknown } | undefined
  }
  return _tag === "AuthenticationError" && (status !== undefined || payload?.error === "invalid_token_response")
}

/** The message of a second completion: RFC 6749 §5.2 `invalid_grant`, the grant was used already. */
export const usedUp = (state: "completing" | "completed") => ({
  message:
    state === "completed"
      ? "this sign-in was completed already: a pending authorization is single-use"
      : "this sign-in is being completed already: a pending authorization is single-use",
  payload: { error: "invalid_grant", error_description: "the pending authorization was completed already" }
})

/** The memory: `claim` a key (its earlier state if it is known), then `settle` it once the completion ended. */
export const memory = () => {
  const seen = new Map<string, "completing" | "completed">()
  return {
    claim: (key: string): "completing" | "completed" | undefined => {
      const known = seen.get(key)
      if (known !== undefined) return known
      seen.set(key, "completing")
      if (seen.size > MEMORY) seen.delete(seen.keys().next().value!)
      return undefined
    },
    settle: (key: string, definitive: boolean): void => {
      if (definitive) seen.set(key, "completed")
      else seen.delete(key)
    }
  }
}
