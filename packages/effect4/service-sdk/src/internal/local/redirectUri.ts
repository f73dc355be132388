/**
 * What `authorizeLocal`'s loopback server needs of a redirect URI on top of the Service's rules
 * (`shared/redirectUri.ts`, one rule for both lines): plain `http` on a loopback IP literal (RFC 8252 §7.3, §8.3);
 * no port: an ephemeral one for this sign-in.
 */
import * as Effect from "effect/Effect"
import { ConfigurationError } from "../../ServiceError.js"
import { ENV } from "../config.js"
import { maskUrlCredentials } from "@service-sdk/shared/redact"
import { LOOPBACK_EXAMPLE, loopbackRedirect } from "@service-sdk/shared/redirectUri"

/** A ConfigurationError of `authorizeLocal` (credentials in a URI it names are masked). */
export const invalid = (message: string) =>
  new ConfigurationError({ message: `authorizeLocal: ${maskUrlCredentials(message)}` })

export interface LoopbackRedirect {
  /** The address to bind. */
  readonly host: "127.0.0.1" | "::1"
  /** 0: an ephemeral port, chosen by the OS for this sign-in. */
  readonly port: number
  readonly path: string
  /** The redirect URI's query (`?…`, or empty): kept in the URI of each sign-in. */
  readonly search: string
}

/**
 * The loopback server's address, or a ConfigurationError naming the rule and the fix: the Service's rules for every
 * redirect URI, then `http` on a loopback IP literal (`shared/redirectUri.ts`, one rule for both lines).
 */
export const parseLoopbackRedirect = (value: string | undefined): Effect.Effect<LoopbackRedirect, ConfigurationError> =>
  Effect.suspend(() => {
    if (value === undefined || value.trim() === "") {
      return Effect.fail(
        invalid(
          `missing redirectUri: pass the \`redirectUri\` option or set ${ENV.redirectUri} (e.g. ${LOOPBACK_EXAMPLE})`
        )
      )
    }
    const parsed = loopbackRedirect(value.trim())
    if (!parsed.ok) return Effect.fail(invalid(parsed.problem))
    const { bindHost, path, port, search } = parsed.target
    return Effect.succeed({ host: bindHost, port, path, search })
  })
