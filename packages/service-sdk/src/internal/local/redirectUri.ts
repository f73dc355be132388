/**
 * What `authorizeLocal`'s loopback server needs of a redirect URI on top of the Service's rules
 * (`shared/redirectUri.ts`, one rule for both lines): `http` (it has no TLS certificate) on a loopback IP literal; a
 * loopback redirect URI without a port gets an ephemeral port per sign-in.
 */
import * as Effect from "effect/Effect"
import { ConfigurationError } from "../../ServiceError.js"
import { ENV } from "../config.js"
import { maskUrlCredentials } from "@service-sdk/shared/redact"
import { LOOPBACK_EXAMPLE, loopbackRedirect } from "@service-sdk/shared/redirectUri"

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

const invalid = (message: string) =>
  new ConfigurationError({ message: `authorizeLocal: ${maskUrlCredentials(message)}` })

/** The loopback server's address and callback path, or a ConfigurationError saying what is wrong with the URI. */
export const parseLoopbackRedirect = (
  value: string | undefined
): Effect.Effect<LoopbackRedirect, ConfigurationError> => {
  if (value === undefined || value.trim() === "") {
    return Effect.fail(
      invalid(
        `missing redirectUri: pass the \`redirectUri\` option or set ${ENV.redirectUri} (a loopback URI such as ${LOOPBACK_EXAMPLE})`
      )
    )
  }
  const parsed = loopbackRedirect(value.trim())
  if (!parsed.ok) return Effect.fail(invalid(parsed.problem))
  const { bindHost, hostname, path, port, search, uri } = parsed.target
  return Effect.succeed({
    uri,
    origin: `http://${hostname}:${port}`,
    port,
    uriFor: (bound) => `http://${hostname}:${bound}${path}${search}`,
    path,
    addresses: [{ host: bindHost, required: true }]
  })
}
