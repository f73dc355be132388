/**
 * The loopback HTTP server of `authorizeLocal` (RFC 8252 §7.3): bound to the redirect URI's host and port only,
 * closed at once (open connections included) when its scope closes.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import { ConfigurationError } from "../../ServiceError.js"
import { describeCause } from "@service-sdk/shared/redact"
import { PAGE_HEADERS, type Page } from "@service-sdk/shared/loopbackPages"

/** Sends `page` and waits until it is handed to the OS (or the client went away). */
export const send = (
  response: Http.ServerResponse,
  page: Page,
  headers: Readonly<Record<string, string>> = {}
): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (response.writableEnded || response.destroyed) return resume(Effect.void)
    let done = false
    const finish = () => {
      if (done) return
      done = true
      resume(Effect.void)
    }
    response.once("finish", finish)
    response.once("close", finish)
    response.writeHead(page.status, {
      ...PAGE_HEADERS,
      ...headers,
      "content-length": String(Buffer.byteLength(page.html))
    })
    response.end(page.html)
  })

const hostLabel = (host: string) => (host.includes(":") ? `[${host}]` : host)

const bindFailure = (error: NodeJS.ErrnoException, host: string, port: number) => {
  const where = `${hostLabel(host)}:${port}`
  switch (error.code) {
    case "EADDRINUSE":
      return new ConfigurationError({
        message: `authorizeLocal: port ${port} is already in use on ${hostLabel(host)}: stop the program using it, or use a redirectUri with another port (registered with the Service)`
      })
    case "EACCES":
      return new ConfigurationError({
        message: `authorizeLocal: not permitted to listen on ${where}: use a redirectUri with a port above 1023`
      })
    default:
      return new ConfigurationError({ message: `authorizeLocal: cannot listen on ${where}: ${describeCause(error)}` })
  }
}

/** The machine has no such address (IPv6 disabled): an optional address is then skipped. */
const isUnavailable = (error: NodeJS.ErrnoException) => error.code === "EADDRNOTAVAIL" || error.code === "EAFNOSUPPORT"

/** Stops accepting and destroys every open connection, so the close completes at once. */
const closeNow = (server: Http.Server) =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })

const bind = (server: Http.Server, address: { readonly host: string; readonly required: boolean }, port: number) =>
  Effect.async<void, NodeJS.ErrnoException>((resume) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening)
      resume(Effect.fail(error))
    }
    const onListening = () => {
      server.off("error", onError)
      resume(Effect.void)
    }
    server.once("error", onError)
    server.once("listening", onListening)
    server.listen({ host: address.host, port, exclusive: true })
  }).pipe(
    Effect.catchAll((error) =>
      !address.required && isUnavailable(error) ? Effect.void : Effect.fail(bindFailure(error, address.host, port))
    )
  )

/**
 * Listens on `port` of each address (0: an ephemeral port, the same for every address), answering every request with
 * `handle` in a fiber of its own; succeeds with the port. Closing the scope closes the servers and their
 * connections, then interrupts the handlers still running.
 */
export const listen = (options: {
  readonly addresses: ReadonlyArray<{ readonly host: string; readonly required: boolean }>
  readonly port: number
  readonly handle: (request: Http.IncomingMessage, response: Http.ServerResponse) => Effect.Effect<void>
}): Effect.Effect<number, ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const run = yield* FiberSet.makeRuntime<never>()
    const serve = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      run(
        options
          .handle(request, response)
          .pipe(
            Effect.catchAllCause((cause) =>
              Effect.logWarning(
                `authorizeLocal: the callback handler failed: ${describeCause(Cause.squash(cause))}`
              ).pipe(Effect.zipRight(Effect.sync(() => response.destroy())))
            )
          )
      )
    }
    let port = options.port
    for (const address of options.addresses) {
      const server = yield* Effect.acquireRelease(
        Effect.sync(() => Http.createServer(serve)),
        closeNow
      )
      yield* bind(server, address, port)
      const bound = server.address()
      if (port === 0 && typeof bound === "object" && bound !== null) port = bound.port
    }
    return port
  })
