import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"

/** @internal */
export type Handler<E = never> = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E,
  HttpServerRequest.HttpServerRequest
>

/**
 * Routes on the request method, answering 405 with an `Allow` header otherwise (routes are registered with
 * `HttpRouter.all`, so a wrong method is told apart from an unknown path).
 *
 * @internal
 */
export const methods = <E, R>(
  handlers: Partial<Record<HttpMethod, Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>>>,
  notAllowed: (allow: string, method: string) => HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> => {
  const allow = Object.keys(handlers).join(", ")
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const handler = handlers[request.method]
    return handler === undefined ? Effect.succeed(notAllowed(allow, request.method)) : handler
  })
}

/** The path without the query string. @internal */
export const pathname = (url: string): string => {
  const index = url.indexOf("?")
  return index === -1 ? url : url.slice(0, index)
}

/**
 * One log line per answered request: method, path (without the query string, where codes and states travel; control
 * characters removed, at most 200 characters), status and milliseconds. Never a header or a body. @internal
 */
export const requestLine = (method: string, url: string, status: number, millis: number): string => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const path = pathname(url).replace(/[\u0000-\u001f\u007f-\u009f]/g, "")
  return `${method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path} ${status} ${Math.round(millis)} ms`
}

/** `app`, calling `log` with one {@link requestLine} per answered request. @internal */
export const withRequestLog =
  (log: ((line: string) => void) | undefined) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    log === undefined
      ? app
      : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const started = performance.now()
          return Effect.tap(app, (response) =>
            Effect.sync(() =>
              log(requestLine(request.method, request.url, response.status, performance.now() - started))
            )
          )
        })

/** The query string parameters. @internal */
export const query = (url: string): URLSearchParams => {
  const index = url.indexOf("?")
  return new URLSearchParams(index === -1 ? "" : url.slice(index + 1))
}

/** @internal */
export const json = (
  body: unknown,
  status = 200,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json; charset=utf-8",
    ...(headers === undefined ? {} : { headers })
  })

/** @internal */
export const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined &&
  (address === "127.0.0.1" || address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127."))

/** A `Host` header naming a loopback host (127.0.0.0/8, localhost, [::1]), with or without a port. @internal */
export const isLoopbackHost = (host: string | undefined): boolean => {
  if (host === undefined) return false
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(host.trim())
  if (match === null) return false
  const name = match[1]!.toLowerCase()
  return name === "localhost" || name === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(name)
}

/** A media type without its parameters, lower case. @internal */
export const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

/** `application/x-www-form-urlencoded` decoding of one component (`+` is a space). @internal */
export const formDecode = (value: string): string | undefined => {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/** The first parameter that occurs more than once, if any (RFC 6749 §3.1, §3.2: parameters MUST NOT repeat). @internal */
export const repeatedParameter = (params: URLSearchParams): string | undefined => {
  const seen = new Set<string>()
  for (const key of params.keys()) {
    if (seen.has(key)) return key
    seen.add(key)
  }
  return undefined
}
