/**
 * Redirect URIs: the Service's rules, checked when a provider or client is configured (RFC 8252 §7.3, §8.3; OAuth
 * 2.1): `https`, or `http` on a loopback IP literal (`127.0.0.1`, `[::1]`); `localhost` and other plain-`http` hosts
 * are refused.
 */
import { maskUrlCredentials } from "./redact.js"

/** The loopback IP literals a plain-`http` redirect URI may use (RFC 8252 §7.3; never `localhost`, §8.3). */
const LOOPBACK_LITERALS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]"])

const RULE = "the Service's rule: https, or http on a loopback IP literal (127.0.0.1 or [::1]); RFC 8252 §7.3, §8.3"

/** `url` with another host (and the port as written), for the fix a message proposes. */
const withHost = (url: URL, host: string) =>
  `${url.protocol}//${host}${url.port === "" ? "" : `:${url.port}`}${url.pathname}${url.search}`

/**
 * What is wrong with `url` as a redirect URI under the Service's rules, with the fix, or undefined when it is fine.
 */
export const redirectUriProblem = (url: URL): string | undefined => {
  const shown = maskUrlCredentials(url.href)
  if (url.username !== "" || url.password !== "" || url.hash !== "") {
    // RFC 6749 §3.1.2: the redirection endpoint URI must not include a fragment.
    return `redirectUri must have no credentials or fragment (RFC 6749 §3.1.2), got ${url.origin}${url.pathname}`
  }
  if (url.protocol === "https:") return undefined
  if (url.protocol !== "http:") {
    return `redirectUri must use https, or http on a loopback IP literal (${RULE}), got ${url.protocol} in ${shown}`
  }
  if (LOOPBACK_LITERALS.has(url.hostname)) return undefined
  if (url.hostname === "localhost") {
    return `redirectUri ${shown} uses localhost, which the Service refuses (${RULE}): use ${withHost(url, "127.0.0.1")} and register that URI with the Service`
  }
  return `redirectUri ${shown} uses plain http on ${url.hostname}, which the Service refuses (${RULE}): use ${withHost(
    url,
    url.host
  ).replace(
    /^http:/,
    "https:"
  )} for a web app, or http://127.0.0.1${url.pathname} (with or without a port) for a local one`
}
