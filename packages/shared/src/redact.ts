/**
 * Turning failures and tokens into text that is safe to show: no request objects (they hold Authorization headers
 * and form bodies with secrets), no token values.
 */
import { base64, base64Url, utf8Bytes } from "./bytes.js"

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

/**
 * A plain Error standing in for `u` as an error's `cause`: the description only (with `secrets` masked: a client or
 * proxy may quote the request it was sending), none of `u`'s fields.
 */
export const safeCause = (u: unknown, secrets: ReadonlyArray<string | undefined> = []): Error => {
  const description = describeCause(u)
  const error = new Error(secrets.length === 0 ? description : maskSecrets(description, secrets))
  error.name = u instanceof Error ? u.name : "Cause"
  return error
}

/** `abcd…wxyz`: enough of a token to tell two apart, never enough to use. */
export const maskToken = (token: string): string =>
  token.length <= 12 ? "…" : `${token.slice(0, 4)}…${token.slice(-4)}`

/** Shorter values are not masked: they would match ordinary words (and no real secret is that short). */
const MIN_SECRET_LENGTH = 4

/**
 * The forms a secret can take when a server echoes a request back: as is, form-encoded (`+` for spaces),
 * percent-encoded, JSON-escaped, and base64 (of the value and, for a Basic credential, of `id:secret`).
 */
const variantsOf = (secret: string): ReadonlyArray<string> => {
  const formEncoded = new URLSearchParams({ v: secret }).toString().slice(2)
  const variants = [
    secret,
    formEncoded,
    encodeURIComponent(secret),
    JSON.stringify(secret).slice(1, -1),
    base64(utf8Bytes(secret)).replace(/=+$/, ""),
    base64Url(utf8Bytes(secret))
  ]
  return [...new Set(variants)].filter((variant) => variant.length >= MIN_SECRET_LENGTH)
}

/**
 * `text` with every known secret value masked as `[redacted]` (the client secret, the Basic credential, access and
 * refresh tokens, the code, the PKCE verifier): for server-supplied text (`error_description`, API error messages)
 * before it reaches an error, a log line or a span, since a server may reflect the request.
 */
export const maskSecrets = (text: string, knownSecrets: ReadonlyArray<string | undefined>): string => {
  const variants = knownSecrets
    .flatMap((secret) => (secret === undefined ? [] : variantsOf(secret)))
    .sort((a, b) => b.length - a.length)
  let masked = text
  for (const variant of variants) masked = masked.split(variant).join("[redacted]")
  return masked
}

const isSchemeChar = (code: number): boolean =>
  (code >= 97 && code <= 122) ||
  (code >= 65 && code <= 90) ||
  (code >= 48 && code <= 57) ||
  code === 43 ||
  code === 45 ||
  code === 46
const isLetter = (code: number): boolean => (code >= 97 && code <= 122) || (code >= 65 && code <= 90)
const WHITESPACE = /\s/

/**
 * `scheme://user:password@host` → `scheme://[redacted]@host` anywhere in `text` (URLs in messages): what
 * `/([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s"]*@/gi` replaces, in one pass over the text. The regular expression took
 * quadratic time (every letter of a long path was a start that scanned to its end: 34 s for a 100k-character
 * redirect URI); here each character is looked at a bounded number of times.
 */
export const maskUrlCredentials = (text: string): string => {
  let out = ""
  // text before `copied` is in `out`; a scheme never starts before `floor` (the end of the last credential masked)
  let copied = 0
  let floor = 0
  let from = 0
  for (;;) {
    const separator = text.indexOf("://", from)
    if (separator === -1) break
    from = separator + 1
    // the scheme: the longest run of scheme characters before "://" that starts with a letter
    let start = separator
    while (start > floor && isSchemeChar(text.charCodeAt(start - 1))) start--
    while (start < separator && !isLetter(text.charCodeAt(start))) start++
    if (start === separator) continue
    // the authority's user information: up to an "@", before any of / ? # " or whitespace
    let end = separator + 3
    while (end < text.length) {
      const char = text[end]!
      if (char === "@" || char === "/" || char === "?" || char === "#" || char === '"' || WHITESPACE.test(char)) break
      end++
    }
    if (text[end] !== "@") {
      // another "://" that starts before `end - 1` would have stopped the scan at its "/"
      from = Math.max(from, end - 1)
      continue
    }
    out += `${text.slice(copied, separator + 3)}[redacted]`
    copied = end
    floor = end + 1
    from = end + 1
  }
  return copied === 0 ? text : out + text.slice(copied)
}

/** A decoded JSON value with {@link maskSecrets} applied to every string in it (server-supplied error payloads). */
export const maskJson = (value: unknown, knownSecrets: ReadonlyArray<string | undefined>): unknown => {
  if (value === undefined) return undefined
  try {
    return JSON.parse(maskSecrets(JSON.stringify(value), knownSecrets))
  } catch {
    return undefined
  }
}

/** The bearer token an outgoing request carries, if any: the secret an API answer to it may echo. */
export const bearerOf = (headers: Readonly<Record<string, string>>): string | undefined => {
  const value = headers.authorization
  return value !== undefined && /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, "") : undefined
}

/**
 * Terminal escape sequences from untrusted text, removed whole (not just their ESC, which would leave `[2J` behind):
 * CSI (`ESC [` or the C1 `U+009B`), OSC/DCS/APC/PM/SOS strings up to their terminator, and two-character escapes.
 */
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?|(?:\u001b[\]P_^X]|[\u0090\u009d\u009e\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -~]?/g

/**
 * Characters that must not reach a terminal, a log line or a page from untrusted text: C0/C1 controls (ESC, BEL, CR,
 * LF…), invisible format characters (bidi marks and overrides such as U+200F, U+061C, U+202E; zero-width characters
 * such as U+200B, U+2060, U+FEFF) and the line and paragraph separators U+2028/U+2029.
 */
const UNSAFE_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

/** The longest server- or attacker-supplied text kept in an error (`error_description`, DESIGN section 3). */
export const MAX_UNTRUSTED_TEXT = 512

/**
 * Server-supplied or otherwise untrusted text (an `error_description`, an API error message, a profile field) made
 * safe to show in an error, a log line or a terminal: escape sequences and control, bidi and invisible characters
 * removed, then capped at `max` characters (never splitting a surrogate pair). The one cleaner for the token
 * endpoint, the data API and the CLI (DESIGN section 4, "Server-supplied text").
 *
 * @since 1.0.0
 */
export const cleanUntrustedText = (text: string, max: number = MAX_UNTRUSTED_TEXT): string => {
  const cleaned = text.replace(ESCAPE_SEQUENCE, "").replace(UNSAFE_TEXT, "")
  if (cleaned.length <= max) return cleaned
  const cut = cleaned.slice(0, max)
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut
}

/**
 * Whether `token` is a plausible bearer credential: visible ASCII only (%x21-7E), which holds RFC 6750 §2.1's
 * `b64token` and the JWT alphabet; no space, control character or non-ASCII that could break a header or a terminal.
 */
export const isVisibleAscii = (token: string): boolean => /^[\x21-\x7e]+$/.test(token)

/**
 * What a request carries that must never reach a span, for masking a failure that quotes it: the values of its
 * redacted headers (and, for `Authorization`, the credential after its scheme) and of its form body.
 */
export const requestSecretValues = (
  redactedHeaderValues: ReadonlyArray<string>,
  formBody: string | undefined
): Array<string> => {
  const secrets: Array<string> = []
  for (const value of redactedHeaderValues) secrets.push(value, value.replace(/^\S+\s+/, ""))
  if (formBody !== undefined) for (const value of new URLSearchParams(formBody).values()) secrets.push(value)
  return secrets
}

/** `raw` parsed, its user name and password removed (for a span's URL attributes); undefined when it is no URL. */
export const urlWithoutCredentials = (raw: string): URL | undefined => {
  try {
    const url = new URL(raw)
    url.username = ""
    url.password = ""
    return url
  } catch {
    return undefined
  }
}
