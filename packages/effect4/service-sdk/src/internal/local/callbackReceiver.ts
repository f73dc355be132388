/**
 * Receiving the authorization response (RFC 6749 §4.1.2) on the loopback server. Until the sign-in's state is known,
 * and afterwards for a callback without it, the answer is a 400 page and the callback is ignored: any web page can
 * reach the port, so only the state the server echoes may end the flow (RFC 6749 §10.12). The first callback with
 * the state is handed over, its browser tab waiting for the final page; later ones get 409, other paths 404, other
 * methods 405.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ConfigurationError } from "../../ServiceError.js"
import * as LoopbackServer from "./loopbackServer.js"
import {
  alreadyReceivedPage,
  failurePage,
  methodNotAllowedPage,
  notFoundPage,
  type Page
} from "@service-sdk/shared/loopbackPages"
import type { LoopbackRedirect } from "./redirectUri.js"

export interface Callback {
  readonly query: URLSearchParams
  /** Sends the final page and ends the response. */
  readonly reply: (page: Page) => Effect.Effect<void>
}

export interface Receiver {
  readonly redirectUri: string
  /** The first callback carrying the expected state; others get a 400 page and are ignored. */
  readonly callback: Effect.Effect<Callback>
  /** The sign-in's state, once known (until then every callback is ignored). */
  readonly expectState: (state: string) => Effect.Effect<void>
}

/** A server on `redirect` (closed with the scope); its actual redirect URI, and the first callback that arrives. */
export const receive = (redirect: LoopbackRedirect): Effect.Effect<Receiver, ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const arrived = yield* Deferred.make<Callback>()
    let expected: string | undefined
    const port = yield* LoopbackServer.listen(redirect, (request, response) => {
      const url = new URL(request.url ?? "/", "http://loopback")
      if (url.pathname !== redirect.path) return LoopbackServer.sendPage(response, notFoundPage())
      if (request.method !== "GET") return LoopbackServer.sendPage(response, methodNotAllowedPage(), { allow: "GET" })
      if (expected === undefined || url.searchParams.get("state") !== expected) {
        // any web page can reach the port: only the state the server echoes may end the flow (RFC 6749 §10.12)
        return LoopbackServer.sendPage(
          response,
          failurePage({
            error: "invalid_state",
            description: "This response does not belong to the sign-in in progress."
          })
        )
      }
      const reply = (page: Page) => Effect.sync(() => LoopbackServer.sendPage(response, page))
      if (!Deferred.doneUnsafe(arrived, Effect.succeed({ query: url.searchParams, reply }))) {
        LoopbackServer.sendPage(response, alreadyReceivedPage())
      }
    })
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
