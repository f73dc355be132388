/**
 * The `iss` of an authorization response (RFC 9207), one rule for both Effect lines (DESIGN section 9, "Callback and
 * redirect"): compared with the configured issuer by simple string comparison (§2.4), the issuer defaulting to the
 * `authUrl` without a trailing slash; a response without `iss` passes unless `requireIss` is set.
 */
import { cleanUntrustedText } from "./redact.js"

/** `url` without its trailing slashes, in one pass (no regular expression that backtracks over a run of them). */
export const withoutTrailingSlashes = (url: string): string => {
  let end = url.length
  while (end > 0 && url.charCodeAt(end - 1) === 47) end--
  return end === url.length ? url : url.slice(0, end)
}

/** The issuer a client expects when none is configured: its `authUrl` without a trailing slash. */
export const defaultIssuer = (authUrl: string): string => withoutTrailingSlashes(authUrl)

/** Why an authorization response's `iss` is refused: the words and the error payload. */
export interface IssuerRefusal {
  readonly message: string
  readonly payload: { readonly error: string; readonly error_description: string }
}

/**
 * RFC 9207 §2.4: what is wrong with the `iss` of an authorization response (`null` when it has none), or undefined
 * when it passes. `issuer` undefined: nothing to compare with (only `requireIss` applies).
 */
export const issuerRefusal = (
  iss: string | null,
  issuer: string | undefined,
  requireIss: boolean
): IssuerRefusal | undefined => {
  if (iss === null) {
    return requireIss
      ? {
          message:
            "the authorization response has no iss parameter, and requireIss is set (RFC 9207 §2.4): refused, possibly from another authorization server",
          payload: { error: "invalid_request", error_description: "the authorization response has no iss" }
        }
      : undefined
  }
  if (issuer === undefined || iss === issuer) return undefined
  return {
    message: `the authorization response comes from another issuer (iss ${JSON.stringify(cleanUntrustedText(iss, 200))}, expected ${issuer}; RFC 9207): refused`,
    payload: { error: "invalid_request", error_description: "iss does not match the configured issuer" }
  }
}
