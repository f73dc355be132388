/**
 * What `authorizeLocal`'s loopback server needs of a redirect URI on top of the Service's rules
 * (`../redirectUriRules.ts`): `http` (it has no TLS certificate); a loopback redirect URI without a port gets an
 * ephemeral port per sign-in.
 */
import * as Effect from "effect/Effect"
import { ConfigurationError } from "../../ServiceError.js"
import { ENV } from "../config.js"
import { maskUrlCredentials } from "../redact.js"
import { redirectUriProblem } from "../redirectUriRules.js"

/** Where the loopback server listens and which path it answers. */
export interface LoopbackRedirect {
  /** The redirect URI as configured. */
  readonly uri: string
  /** `http://host:port`, for building request URLs. */
  readonly origin: string
  /** 0 when the redirect URI has no port: an ephemeral one per sign-in. */
  readonly port: number
  /** The redirect URI with `port` filled in: for a sign-in on an ephemeral port. */
  readonly uriFor: (port: number) => string
  /** The callback path (the redirect URI's path). */
  readonly path: string
  /** The addresses to bind; `required: false` ones are skipped when the machine lacks them (no IPv6). */
  readonly addresses: ReadonlyArray<{ readonly host: string; readonly required: boolean }>
}

const EXAMPLE = "http://127.0.0.1:8080/callback"

const invalid = (message: string) =>
  new ConfigurationError({ message: `authorizeLocal: ${maskUrlCredentials(message)}` })

/** The port as written, since `URL` drops a default port (`http://127.0.0.1:80/` has `port === ""`). */
const explicitPort = (value: string): number | undefined => {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(value.trim())?.[1]
  const port = authority === undefined ? undefined : /:(\d+)$/.exec(authority)?.[1]
  return port === undefined ? undefined : Number(port)
}

const addressesOf = (hostname: string): LoopbackRedirect["addresses"] | undefined => {
  switch (hostname) {
    case "127.0.0.1":
      return [{ host: "127.0.0.1", required: true }]
    case "[::1]":
      return [{ host: "::1", required: true }]
    default:
      return undefined
  }
}

/** The loopback server's address and callback path, or a ConfigurationError saying what is wrong with the URI. */
export const parseLoopbackRedirect = (
  value: string | undefined
): Effect.Effect<LoopbackRedirect, ConfigurationError> => {
  if (value === undefined || value.trim() === "") {
    return Effect.fail(
      invalid(
        `missing redirectUri: pass the \`redirectUri\` option or set ${ENV.redirectUri} (a loopback URI such as ${EXAMPLE})`
      )
    )
  }
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return Effect.fail(invalid(`redirectUri is not a valid URL: ${JSON.stringify(value)}`))
  }
  const problem = redirectUriProblem(url)
  if (problem !== undefined) return Effect.fail(invalid(problem))
  if (url.protocol !== "http:") {
    return Effect.fail(
      invalid(
        `redirectUri must use http (the loopback server has no TLS certificate), got ${url.protocol} in ${url.href}`
      )
    )
  }
  const addresses = addressesOf(url.hostname)
  if (addresses === undefined) {
    return Effect.fail(
      invalid(`redirectUri must be on a loopback IP literal (127.0.0.1 or [::1]), got ${url.hostname} in ${url.href}`)
    )
  }
  // RFC 8252 §7.3: the Service accepts a loopback redirect URI registered without a port, with any port at sign-in
  const port = explicitPort(value)
  if (port === 0 || (port !== undefined && port > 65535)) {
    return Effect.fail(
      invalid(
        `redirectUri needs a port from 1 to 65535, or none for an ephemeral one (such as ${EXAMPLE}), got ${url.href}`
      )
    )
  }
  return Effect.succeed({
    uri: url.href,
    origin: `http://${url.hostname}:${port ?? 0}`,
    port: port ?? 0,
    uriFor: (bound) => `http://${url.hostname}:${bound}${url.pathname}${url.search}`,
    path: url.pathname,
    addresses
  })
}
