/**
 * `authorizeLocal`'s one-shot loopback server (RFC 8252 §7.3, §8.3): the redirect URI's rules (plain `http` on a
 * loopback IP literal; no port: an ephemeral one), and a server that answers the callback path only (404 elsewhere).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import { ConfigurationError } from "../ServiceError.js"
import { ENV } from "./config.js"
import { cleanUntrustedText, describeCause, maskUrlCredentials } from "@service-sdk/shared/redact"

const EXAMPLE = "http://127.0.0.1:8080/callback"

const invalid = (message: string) =>
  new ConfigurationError({ message: `authorizeLocal: ${maskUrlCredentials(message)}` })

export interface LoopbackRedirect {
  /** The address to bind. */
  readonly host: "127.0.0.1" | "::1"
  /** 0: an ephemeral port, chosen by the OS for this sign-in. */
  readonly port: number
  readonly path: string
}

/** The port as written (`URL` drops a default port). */
const explicitPort = (value: string): number | undefined => {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(value.trim())?.[1]
  const port = authority === undefined ? undefined : /:(\d+)$/.exec(authority)?.[1]
  return port === undefined ? undefined : Number(port)
}

/** The loopback server's address, or a ConfigurationError naming the rule and the fix. */
export const parseLoopbackRedirect = (value: string | undefined): Effect.Effect<LoopbackRedirect, ConfigurationError> =>
  Effect.suspend(() => {
    if (value === undefined || value.trim() === "") {
      return Effect.fail(
        invalid(`missing redirectUri: pass the \`redirectUri\` option or set ${ENV.redirectUri} (e.g. ${EXAMPLE})`)
      )
    }
    if (!URL.canParse(value.trim()))
      return Effect.fail(invalid(`redirectUri is not a valid URL: ${JSON.stringify(value)}`))
    const url = new URL(value.trim())
    if (url.protocol !== "http:") {
      return Effect.fail(
        invalid(`redirectUri must use http on a loopback IP literal, got ${url.protocol} (e.g. ${EXAMPLE})`)
      )
    }
    const host = url.hostname === "127.0.0.1" ? "127.0.0.1" : url.hostname === "[::1]" ? "::1" : undefined
    if (host === undefined) {
      return Effect.fail(
        invalid(
          `redirectUri must be on a loopback IP literal (127.0.0.1 or [::1]; RFC 8252 §8.3: not localhost), got ${url.hostname}: use ${EXAMPLE}`
        )
      )
    }
    return Effect.succeed({ host, port: explicitPort(value) ?? 0, path: url.pathname })
  })

export interface Callback {
  readonly query: URLSearchParams
  /** Sends the final page and ends the response. */
  readonly reply: (status: number, html: string) => Effect.Effect<void>
}

/** A server on `redirect` (closed with the scope); its actual redirect URI, and the first callback that arrives. */
export const listen = (
  redirect: LoopbackRedirect
): Effect.Effect<
  { readonly redirectUri: string; readonly callback: Effect.Effect<Callback> },
  ConfigurationError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const arrived = yield* Deferred.make<Callback>()
    const server = yield* Effect.acquireRelease(
      Effect.callback<Http.Server, ConfigurationError>((resume) => {
        const server = Http.createServer((request, response) => {
          const url = new URL(request.url ?? "/", "http://loopback")
          if (request.method !== "GET" || url.pathname !== redirect.path) {
            response.writeHead(404, { "content-type": "text/plain" }).end("not found")
            return
          }
          const reply = (status: number, html: string) =>
            Effect.sync(() => {
              response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
              response.end(html)
            })
          if (!Deferred.doneUnsafe(arrived, Effect.succeed({ query: url.searchParams, reply }))) {
            response.writeHead(409, { "content-type": "text/plain" }).end("this sign-in has been answered already")
          }
        })
        server.once("error", (error: NodeJS.ErrnoException) =>
          resume(
            Effect.fail(
              invalid(
                error.code === "EADDRINUSE"
                  ? `port ${redirect.port} on ${redirect.host} is in use: close the program using it or pick another port in redirectUri`
                  : `cannot listen on ${redirect.host}:${redirect.port}: ${describeCause(error)}`
              )
            )
          )
        )
        server.listen(redirect.port, redirect.host, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.sync(() => {
          server.close()
          server.closeAllConnections()
        })
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : redirect.port
    const host = redirect.host === "::1" ? "[::1]" : redirect.host
    return { redirectUri: `http://${host}:${port}${redirect.path}`, callback: Deferred.await(arrived) }
  })

const escape = (text: string) => cleanUntrustedText(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export const page = (title: string, detail: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1><p>${escape(detail)}</p></body></html>`
