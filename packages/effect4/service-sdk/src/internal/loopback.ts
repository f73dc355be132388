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
import { LOOPBACK_EXAMPLE, loopbackRedirect } from "@service-sdk/shared/redirectUri"

const invalid = (message: string) =>
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

export interface Callback {
  readonly query: URLSearchParams
  /** Sends the final page and ends the response. */
  readonly reply: (status: number, html: string) => Effect.Effect<void>
}

/** A server on `redirect` (closed with the scope); its actual redirect URI, and the first callback that arrives. */
export const listen = (
  redirect: LoopbackRedirect
): Effect.Effect<
  {
    readonly redirectUri: string
    /** The first callback carrying the expected state; others get a 400 page and are ignored. */
    readonly callback: Effect.Effect<Callback>
    /** The sign-in's state, once known (until then every callback is ignored). */
    readonly expectState: (state: string) => Effect.Effect<void>
  },
  ConfigurationError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const arrived = yield* Deferred.make<Callback>()
    let expected: string | undefined
    const server = yield* Effect.acquireRelease(
      Effect.callback<Http.Server, ConfigurationError>((resume) => {
        const server = Http.createServer((request, response) => {
          const url = new URL(request.url ?? "/", "http://loopback")
          if (request.method !== "GET" || url.pathname !== redirect.path) {
            response.writeHead(404, { "content-type": "text/plain" }).end("not found")
            return
          }
          if (expected === undefined || url.searchParams.get("state") !== expected) {
            // any web page can reach the port: only the state the server echoes may end the flow (RFC 6749 §10.12)
            response
              .writeHead(400, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
              .end(page("Not this sign-in", "This response does not belong to the sign-in in progress."))
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
    return {
      redirectUri: `http://${host}:${port}${redirect.path}${redirect.search}`,
      callback: Deferred.await(arrived),
      expectState: (state: string) =>
        Effect.sync(() => {
          expected = state
        })
    }
  })

const escape = (text: string) => cleanUntrustedText(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export const page = (title: string, detail: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1><p>${escape(detail)}</p></body></html>`
