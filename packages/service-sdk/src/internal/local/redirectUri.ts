/**
 * Checking that a redirect URI can be served by `authorizeLocal`'s loopback server (RFC 8252 §7.3): plain `http` on a
 * loopback host, with an explicit port.
 */
import * as Effect from "effect/Effect"
import { ConfigurationError } from "../../ServiceError.js"
import { ENV } from "../config.js"
import { maskUrlCredentials } from "../redact.js"

/** Where the loopback server listens and which path it answers. */
export interface LoopbackRedirect {
  /** The redirect URI as configured. */
  readonly uri: string
  /** `http://host:port`, for building request URLs. */
  readonly origin: string
  readonly port: number
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
    // Browsers may resolve `localhost` to either address: bind both, so no other program can take the IPv6 one.
    case "localhost":
      return [
        { host: "127.0.0.1", required: true },
        { host: "::1", required: false }
      ]
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
      invalid(
        `redirectUri must be on a loopback host (127.0.0.1, localhost or [::1]), got ${url.hostname} in ${url.href}`
      )
    )
  }
  const port = explicitPort(value)
  if (port === undefined || port === 0 || port > 65535) {
    return Effect.fail(
      invalid(`redirectUri needs an explicit port registered with the Service (such as ${EXAMPLE}), got ${url.href}`)
    )
  }
  if (url.username !== "" || url.password !== "" || url.hash !== "") {
    // RFC 6749 §3.1.2: the redirection endpoint URI must not include a fragment.
    return Effect.fail(invalid(`redirectUri must have no credentials or fragment, got ${url.origin}${url.pathname}`))
  }
  return Effect.succeed({
    uri: url.href,
    origin: `http://${url.hostname}:${port}`,
    port,
    path: url.pathname,
    addresses
  })
}
