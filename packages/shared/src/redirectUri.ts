/**
 * Redirect URIs (DESIGN section 4, "Redirect URIs"; section 9, "Callback and redirect"), one rule for both Effect lines
 * and every place that takes one (`OAuthClient.make`, `AuthorizationCode.make`, `UserTokens`, `authorizeLocal`):
 *
 * - written in its canonical form, what `new URL(uri).href` prints: the authorization server compares redirect URIs
 *   as strings, so `http://127.1/cb`, `http://0x7f.1/cb`, `HTTP://…`, `http:/127.0.0.1/cb`, a trailing dot, a
 *   backslash, `[0:0:0:0:0:0:0:1]`, an empty userinfo or a default port written out are refused, naming the form to
 *   write instead;
 * - no credentials and no fragment, not even an empty one (RFC 6749 §3.1.2);
 * - no port 0 (omit the port for an ephemeral one);
 * - `https`, or `http` on a loopback IP literal, `127.0.0.1` or `[::1]`, never `localhost` (RFC 8252 §7.3, §8.3).
 *
 * `authorizeLocal` adds its own needs ({@link loopbackRedirect}): `http` on a loopback IP literal, the port to bind.
 */
import { maskUrlCredentials } from "./redact.js"

/** The loopback IP literals a plain-`http` redirect URI may use (RFC 8252 §7.3; never `localhost`, §8.3). */
const LOOPBACK_LITERALS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]"])

/** The rule, as the messages name it. */
export const REDIRECT_URI_RULE =
  "the Service's rule: https, or http on a loopback IP literal (127.0.0.1 or [::1]); RFC 8252 §7.3, §8.3"

/** An example of a loopback redirect URI, for messages. */
export const LOOPBACK_EXAMPLE = "http://127.0.0.1:8080/callback"

/** The longest part of a configured value a message quotes (a value may be very long; the rest is elided). */
const MAX_QUOTED = 200

/** A configured value as a message quotes it: credentials masked, capped. */
const quoted = (value: string): string => {
  const masked = maskUrlCredentials(value)
  return JSON.stringify(masked.length <= MAX_QUOTED ? masked : `${masked.slice(0, MAX_QUOTED)}…`)
}

/** `url` with another host (and its port), for the fix a message proposes. */
const withHost = (url: URL, host: string) =>
  `${url.protocol}//${host}${url.port === "" ? "" : `:${url.port}`}${url.pathname}${url.search}`

/**
 * What is wrong with `value` as a redirect URI under the Service's rules, with the fix, or undefined when it is fine.
 * `value` is taken as written (the caller trims configuration values before).
 */
export const redirectUriProblem = (value: string): string | undefined => {
  if (!URL.canParse(value)) return `redirectUri is not a valid URL: ${quoted(value)}`
  const url = new URL(value)
  if (url.username !== "" || url.password !== "" || url.hash !== "" || value.includes("#")) {
    // RFC 6749 §3.1.2: the redirection endpoint URI must not include a fragment
    return `redirectUri must have no credentials or fragment (RFC 6749 §3.1.2), got ${maskUrlCredentials(`${url.origin}${url.pathname}`)}`
  }
  if (url.port === "0") {
    return `redirectUri must not use port 0: omit the port for an ephemeral one (${url.protocol}//${url.hostname}${url.pathname}${url.search})`
  }
  if (url.href !== value) {
    const defaultPort = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:\d+(?:[/?#]|$)/i.test(value) && url.port === ""
    return `redirectUri must be written in its canonical form ${maskUrlCredentials(url.href)} (as new URL(uri).href prints it; the authorization server compares redirect URIs as strings), got ${quoted(value)}${
      defaultPort ? ` (the port written is ${url.protocol.slice(0, -1)}'s default, which the canonical form omits)` : ""
    }`
  }
  const shown = maskUrlCredentials(url.href)
  if (url.protocol === "https:") return undefined
  if (url.protocol !== "http:") {
    return `redirectUri must use https, or http on a loopback IP literal (${REDIRECT_URI_RULE}), got ${url.protocol} in ${shown}`
  }
  if (LOOPBACK_LITERALS.has(url.hostname)) return undefined
  if (url.hostname === "localhost") {
    return `redirectUri ${shown} uses localhost, which the Service refuses (${REDIRECT_URI_RULE}): use ${withHost(url, "127.0.0.1")} and register that URI with the Service`
  }
  return `redirectUri ${shown} uses plain http on ${url.hostname}, which the Service refuses (${REDIRECT_URI_RULE}): use ${withHost(
    url,
    url.host
  ).replace(
    /^http:/,
    "https:"
  )} for a web app, or http://127.0.0.1${url.pathname} (with or without a port) for a local one`
}

/** Where `authorizeLocal`'s loopback server listens, for a redirect URI that passed {@link loopbackRedirect}. */
export interface LoopbackTarget {
  /** The redirect URI (canonical). */
  readonly uri: string
  /** As the URI writes it: `127.0.0.1` or `[::1]`. */
  readonly hostname: "127.0.0.1" | "[::1]"
  /** The address to bind: `127.0.0.1` or `::1`. */
  readonly bindHost: "127.0.0.1" | "::1"
  /** 0 when the redirect URI has no port: an ephemeral one per sign-in (RFC 8252 §7.3). */
  readonly port: number
  /** The callback path. */
  readonly path: string
  /** The redirect URI's query, if any (`?…`, or empty). */
  readonly search: string
}

/**
 * A redirect URI as `authorizeLocal` needs it: the Service's rules ({@link redirectUriProblem}), then `http` (the
 * loopback server has no TLS certificate) on a loopback IP literal. Either where to listen, or what is wrong.
 */
export const loopbackRedirect = (
  value: string
): { readonly ok: true; readonly target: LoopbackTarget } | { readonly ok: false; readonly problem: string } => {
  const problem = redirectUriProblem(value)
  if (problem !== undefined) return { ok: false, problem }
  const url = new URL(value)
  if (url.protocol !== "http:") {
    return {
      ok: false,
      problem: `redirectUri must use http on a loopback IP literal, 127.0.0.1 or [::1] (the loopback server has no TLS certificate), got ${url.protocol} in ${maskUrlCredentials(url.href)} (e.g. ${LOOPBACK_EXAMPLE})`
    }
  }
  // redirectUriProblem let plain http through on a loopback IP literal only
  const hostname = url.hostname as "127.0.0.1" | "[::1]"
  return {
    ok: true,
    target: {
      uri: url.href,
      hostname,
      bindHost: hostname === "[::1]" ? "::1" : "127.0.0.1",
      port: url.port === "" ? 0 : Number(url.port),
      path: url.pathname,
      search: url.search
    }
  }
}
