/**
 * The loopback HTTP server of `authorizeLocal` (RFC 8252 §7.3): bound to the redirect URI's host and port only,
 * closed at once (open connections included) when its scope closes.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { ConfigurationError } from "../../ServiceError.js"
import { PAGE_HEADERS, type Page } from "@service-sdk/shared/loopbackPages"
import { describeCause } from "@service-sdk/shared/redact"
import { invalid, type LoopbackRedirect } from "./redirectUri.js"

/** Sends `page` (never cached, nothing active, no Referer) and ends the response. */
export const sendPage = (
  response: Http.ServerResponse,
  page: Page,
  headers: Readonly<Record<string, string>> = {}
): void => {
  if (response.writableEnded || response.destroyed) return
  response.writeHead(page.status, {
    ...PAGE_HEADERS,
    ...headers,
    "content-length": String(Buffer.byteLength(page.html))
  })
  response.end(page.html)
}

/**
 * Listens on the host and port of `redirect` (port 0: an ephemeral one), answering every request with `handle`;
 * succeeds with the port bound. Closing the scope closes the server and its connections.
 */
export const listen = (
  redirect: LoopbackRedirect,
  handle: (request: Http.IncomingMessage, response: Http.ServerResponse) => void
): Effect.Effect<number, ConfigurationError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<Http.Server, ConfigurationError>((resume) => {
        const server = Http.createServer(handle)
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
    ),
    (server) => {
      const address = server.address()
      return typeof address === "object" && address !== null ? address.port : redirect.port
    }
  )
