/**
 * Turning failures and tokens into text that is safe to show: no request objects (they hold Authorization headers
 * and form bodies with secrets), no token values.
 */

const messageOf = (u: unknown): string | undefined => {
  if (u instanceof Error) return u.message
  if (typeof u === "object" && u !== null && "message" in u && typeof u.message === "string") return u.message
  return undefined
}

/** A one-line description of a failure, following `cause` chains, never rendering request objects. */
export const describeCause = (u: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = u
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    const tag = typeof current === "object" && "_tag" in current ? String(current._tag) : undefined
    const reason = typeof current === "object" && "reason" in current ? String(current.reason) : undefined
    const message = messageOf(current)
    const code = typeof current === "object" && "code" in current ? String(current.code) : undefined
    const text = message ?? (typeof current === "string" ? current : (reason ?? tag))
    if (text !== undefined && text !== "" && !parts.some((part) => part.includes(text))) {
      parts.push(code !== undefined && !text.includes(code) ? `${text} (${code})` : text)
    }
    current = typeof current === "object" && "cause" in current ? current.cause : undefined
  }
  return parts.length === 0 ? "unknown failure" : parts.join(": ")
}

/** A plain Error standing in for `u` as an error's `cause`: the description only, none of `u`'s fields. */
export const safeCause = (u: unknown): Error => {
  const error = new Error(describeCause(u))
  error.name = u instanceof Error ? u.name : "Cause"
  return error
}

/** `abcd…wxyz`: enough of a token to tell two apart, never enough to use. */
export const maskToken = (token: string): string =>
  token.length <= 12 ? "…" : `${token.slice(0, 4)}…${token.slice(-4)}`
