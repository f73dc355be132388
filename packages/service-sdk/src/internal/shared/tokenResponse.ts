// Copied from packages/shared/src/tokenResponse.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The token endpoint's answer read without Effect (RFC 6749 §5.1, §5.2), for both lines: the body as JSON, the OAuth
 * error payload (server text cleaned, capped and with the request's secrets masked), and the words of a refused or
 * malformed answer. Each line decodes a token and builds its own error classes around these.
 */
import { cleanUntrustedText, isVisibleAscii, maskSecrets } from "./redact.js"

/** RFC 6749 §5.2: the standard fields of an error answer. */
export interface OAuthErrorPayload {
  readonly error: string
  readonly error_description?: string | undefined
  readonly error_uri?: string | undefined
}

/** The body as JSON, when it is JSON. */
export const parseJsonBody = (
  text: string
): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/**
 * The error payload of a refused token request (RFC 6749 §5.2): undefined unless the body is an object with a string
 * `error`; only the standard string fields are kept, each cleaned of control characters and capped (server text
 * reaches messages, logs and terminals), and every known secret of the request masked (a server may echo it).
 */
export const oauthErrorPayload = (body: unknown, secrets: ReadonlyArray<string>): OAuthErrorPayload | undefined => {
  if (typeof body !== "object" || body === null || !("error" in body) || typeof body.error !== "string") {
    return undefined
  }
  const text = (key: string) => {
    const value = (body as Record<string, unknown>)[key]
    return typeof value === "string" ? maskSecrets(cleanUntrustedText(value), secrets) : undefined
  }
  const description = text("error_description")
  const uri = text("error_uri")
  return {
    error: maskSecrets(cleanUntrustedText(body.error, 64), secrets),
    ...(description !== undefined ? { error_description: description } : {}),
    ...(uri !== undefined ? { error_uri: uri } : {})
  }
}

/** The message of a refused token request (4xx other than 429), with its payload when it has one. */
export const rejectedMessage = (status: number, payload: OAuthErrorPayload | undefined): string =>
  payload === undefined
    ? `token endpoint rejected the request (${status})`
    : `token endpoint rejected the request (${status} ${payload.error}${payload.error_description ? `: ${payload.error_description}` : ""})`

/** The `error` of the payload of a 2xx answer that is no usable token. */
export const MALFORMED_ERROR = "invalid_token_response"

/** The message of a 2xx answer that is no usable token; `description` never echoes a value of the answer. */
export const malformedMessage = (status: number, description: string): string =>
  `malformed token response (${status}): ${description}`

/**
 * Why a decoded 2xx answer is no usable bearer token, or undefined when it is one: a `token_type` other than Bearer,
 * or a token that is not visible ASCII (RFC 6750 §2.1: anything else, ESC, CR/LF or non-ASCII, would reach a header,
 * a cache file or a terminal as is). The words never echo a value (a field of the answer may hold a token).
 */
export const unusableToken = (token: {
  readonly access_token: string
  readonly token_type?: string | null | undefined
  readonly refresh_token?: string | null | undefined
}): string | undefined => {
  if (token.token_type != null && token.token_type.toLowerCase() !== "bearer") {
    return "unsupported token_type (expected Bearer)"
  }
  if (!isVisibleAscii(token.access_token)) return "access_token is not visible ASCII (RFC 6750 §2.1)"
  if (token.refresh_token != null && token.refresh_token !== "" && !isVisibleAscii(token.refresh_token)) {
    return "refresh_token is not visible ASCII (RFC 6750 §2.1)"
  }
  return undefined
}
