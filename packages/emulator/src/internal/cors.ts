/**
 * CORS for pages on a loopback origin (DESIGN section 9, Browser): the token endpoint and the data API answer a
 * page's requests and preflights, as the Service does for public clients. Only loopback origins are granted (the
 * emulator runs beside a developer's page, never for the web at large); the consent page and the control API get
 * no grant, so a page cannot drive them.
 *
 * @internal
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"

/** `http(s)://` on 127.0.0.0/8, [::1] or localhost, with an optional port, and nothing else (no path, no userinfo). */
export const isLoopbackOrigin = (origin: string | undefined): boolean => {
  if (origin === undefined) return false
  const match = /^https?:\/\/(\[::1\]|localhost|127(?:\.\d{1,3}){3})(?::\d{1,5})?$/i.exec(origin)
  return match !== null && (!match[1]!.startsWith("127.") || match[1]!.split(".").every((part) => Number(part) < 256))
}

/** Request headers a page may send (what the SDK sends: a bearer token, a form or JSON body). */
const ALLOWED_HEADERS = "authorization, content-type"

/**
 * `app` with CORS for loopback origins: a preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered
 * 204 with the grant, or 403 for another origin; every answer to a loopback origin carries
 * `Access-Control-Allow-Origin` (errors too, so the page can read an OAuth error body) and exposes `Retry-After`.
 *
 * @internal
 */
export const withCors =
  (allowMethods: ReadonlyArray<string>) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const origin = request.headers.origin
      const allowed = isLoopbackOrigin(origin)
      const grant = {
        "access-control-allow-origin": origin ?? "",
        "access-control-expose-headers": "retry-after, content-type",
        vary: "Origin"
      }
      if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
        return Effect.succeed(
          allowed
            ? HttpServerResponse.empty({
                status: 204,
                headers: {
                  ...grant,
                  "access-control-allow-methods": allowMethods.join(", "),
                  "access-control-allow-headers": ALLOWED_HEADERS,
                  "access-control-max-age": "600"
                }
              })
            : HttpServerResponse.empty({ status: 403, headers: { vary: "Origin" } })
        )
      }
      if (!allowed) return app
      return Effect.map(app, (response) => HttpServerResponse.setHeaders(response, grant))
    })
