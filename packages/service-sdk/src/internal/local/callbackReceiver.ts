/**
 * Receiving the authorization response (RFC 6749 §4.1.2) on the loopback server. A callback without the expected
 * `state` gets a 400 page and is ignored: any web page can reach the (known) port, so only a request carrying the
 * state the authorization server echoes may end the flow (RFC 6749 §10.12). The first callback with the state
 * decides: a valid one hands over its code and keeps its browser tab waiting for the final page; an `error` or a
 * missing code gets a 400 page and fails the flow. Other paths get 404; later callbacks 409.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type * as Http from "node:http"
import { parseResponseUrl } from "../oauthClient.js"
import type { AuthenticationError, ConfigurationError } from "../../ServiceError.js"
import * as LoopbackServer from "./loopbackServer.js"
import {
  alreadyReceivedPage,
  failurePage,
  failurePageFor,
  methodNotAllowedPage,
  notFoundPage,
  type Page
} from "@service-sdk/shared/loopbackPages"
import type { LoopbackRedirect } from "./redirectUri.js"

/** A valid callback: its code, and how to answer the browser once the code is exchanged. */
export interface Callback {
  readonly code: string
  /** The callback's whole query, for `completeAuthorization` (which checks `iss` against the configured issuer). */
  readonly query: string
  /** Sends the final page to the waiting browser tab; completes when it is handed to the OS. */
  readonly reply: (page: Page) => Effect.Effect<void>
}

export interface Receiver {
  /** The first valid callback, or the AuthenticationError of the first invalid one. */
  readonly callback: Effect.Effect<Callback, AuthenticationError>
  /** The port the server listens on (an ephemeral one when the redirect URI has none). */
  readonly port: number
}

const requestUrl = (request: Http.IncomingMessage, origin: string): URL | undefined => {
  try {
    return new URL(request.url ?? "/", origin)
  } catch {
    return undefined
  }
}

/** Starts the loopback server for `redirect`; the scope closes it. */
export const receive = (
  redirect: LoopbackRedirect,
  expectedState: string
): Effect.Effect<Receiver, ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const outcome = yield* Deferred.make<Callback, AuthenticationError>()
    const claimed = yield* Ref.make(false)

    const handle = (request: Http.IncomingMessage, response: Http.ServerResponse) =>
      Effect.gen(function* () {
        const url = requestUrl(request, redirect.origin)
        if (url === undefined || url.pathname !== redirect.path) {
          return yield* LoopbackServer.send(response, notFoundPage())
        }
        if (request.method !== "GET") {
          return yield* LoopbackServer.send(response, methodNotAllowedPage(), { allow: "GET" })
        }
        if (url.searchParams.get("state") !== expectedState) {
          yield* Effect.logDebug("authorizeLocal: ignored a callback without the expected state")
          return yield* LoopbackServer.send(
            response,
            failurePage({
              error: "invalid_state",
              description: "This response does not belong to the sign-in in progress."
            })
          )
        }
        // The first callback with the state decides, valid or not.
        if (yield* Ref.getAndSet(claimed, true)) {
          return yield* LoopbackServer.send(response, alreadyReceivedPage())
        }
        const parsed = yield* Effect.either(parseResponseUrl(url.href, { expectedState }))
        if (parsed._tag === "Left") {
          yield* Effect.logDebug("authorizeLocal: the authorization callback was rejected")
          // Answer first: failing the flow closes the server.
          yield* LoopbackServer.send(response, failurePageFor(parsed.left))
          return yield* Deferred.fail(outcome, parsed.left)
        }
        yield* Effect.logDebug("authorizeLocal: authorization callback received")
        yield* Deferred.succeed(outcome, {
          code: parsed.right,
          query: url.search,
          reply: (page) => LoopbackServer.send(response, page)
        })
      })

    const port = yield* LoopbackServer.listen({ addresses: redirect.addresses, port: redirect.port, handle })
    return { callback: Deferred.await(outcome), port }
  })
