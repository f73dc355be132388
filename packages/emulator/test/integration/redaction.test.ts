/**
 * The canary: every secret that crossed the wire during a few flows (access and refresh tokens, the code, the client
 * secret) must be absent from every Debug log line and every error the SDK raised.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import { inspect } from "node:util"
import { AuthorizationCode, authorizeLocal, ClientCredentials, ServiceClient, TokenProvider } from "@service-sdk/effect"
import { Emulator } from "../../src/internal/effectApi.js"
import { ALBUM_ID, freePort, providerOptions, userSession } from "./harness.js"

/** Everything secret in what the SDK sent and received. */
class Wire {
  readonly secrets = new Set<string>()

  private add(value: string | null | undefined) {
    if (typeof value === "string" && value.length >= 8) this.secrets.add(value)
  }

  request(request: HttpClientRequest.HttpClientRequest) {
    const authorization = request.headers.authorization ?? ""
    const [scheme, credentials] = authorization.split(" ")
    if (scheme === "Bearer") this.add(credentials)
    if (scheme === "Basic" && credentials !== undefined) {
      const decoded = Buffer.from(credentials, "base64").toString("utf8")
      this.add(decodeURIComponent(decoded.slice(decoded.indexOf(":") + 1).replace(/\+/g, " ")))
    }
    if (request.body._tag === "Uint8Array" && request.body.contentType === "application/x-www-form-urlencoded") {
      const form = new URLSearchParams(new TextDecoder().decode(request.body.body))
      for (const key of ["code", "refresh_token", "client_secret"]) this.add(form.get(key))
    }
  }

  response(text: string) {
    try {
      const body = JSON.parse(text) as Record<string, unknown>
      for (const key of ["access_token", "refresh_token"]) {
        if (typeof body[key] === "string") this.add(body[key])
      }
    } catch {
      // not JSON: no token in it
    }
  }

  /** An `HttpClient` (undici) that shows the wire every request and every response body. */
  layer(): Layer.Layer<HttpClient.HttpClient> {
    return Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, (client) =>
        client.pipe(
          HttpClient.tapRequest((request) => Effect.sync(() => this.request(request))),
          HttpClient.transformResponse(
            Effect.flatMap((response) =>
              Effect.map(response.text, (text) => {
                this.response(text)
                return HttpClientResponse.fromWeb(
                  response.request,
                  new Response(text === "" ? null : text, {
                    status: response.status,
                    headers: Object.entries(response.headers)
                  })
                )
              })
            )
          )
        )
      )
    ).pipe(Layer.provide(NodeHttpClient.layerUndici))
  }
}

/** Every Debug-level log line, formatted as logfmt (message, annotations, spans and cause). */
const captureLogs = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make((options) => {
      lines.push(Logger.logfmtLogger.log(options))
      if (!Cause.isEmpty(options.cause)) lines.push(Cause.pretty(options.cause, { renderErrorCause: true }))
    })
  )

/** Every way an error shows itself. */
const renderings = (error: unknown): ReadonlyArray<string> => [
  String(error),
  (error as Error).message,
  JSON.stringify(error),
  inspect(error, { depth: 10 }),
  Cause.pretty(Cause.fail(error), { renderErrorCause: true })
]

const leaks = (texts: ReadonlyArray<string>, secrets: ReadonlySet<string>) =>
  texts.flatMap((text) => [...secrets].filter((secret) => text.includes(secret)).map((secret) => ({ secret, text })))

describe("no secret seen on the wire reaches a log line or an error", () => {
  it("the leak check finds a planted secret", () => {
    expect(leaks(["token refreshed: abcdefgh123"], new Set(["abcdefgh123"]))).toHaveLength(1)
    expect(leaks(["token refreshed"], new Set(["abcdefgh123"]))).toHaveLength(0)
  })

  it.scopedLive("client credentials, code exchange, forced refresh, token and API faults, authorizeLocal", () => {
    const wire = new Wire()
    const lines: Array<string> = []
    const errors: Array<unknown> = []
    const failing = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.tap(Effect.flip(effect), (error) => Effect.sync(() => errors.push(error)))

    return Effect.gen(function* () {
      // client credentials: a token, an album, a 403
      const app = yield* Emulator.make()
      const appProvider = yield* ClientCredentials.make({
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        authUrl: app.authUrl
      })
      const appClient = yield* ServiceClient.make({ apiUrl: app.apiUrl }).pipe(
        Effect.provideService(TokenProvider, appProvider)
      )
      yield* appClient.albums.get(ALBUM_ID)
      yield* failing(appClient.users.me)

      // authorization code: exchange, calls, a revoked token (401 → forced refresh)
      const { client, emulator, provider } = yield* userSession({
        provider: { maxRetries: 1 },
        client: { maxRetries: 1 }
      })
      yield* client.users.me
      yield* emulator.revoke(Redacted.value(yield* provider.getAccessToken))
      yield* client.users.me
      // token endpoint faults: 5xx after retries, invalid_grant, a malformed answer carrying a token-like value
      const current = yield* provider.getAccessToken
      yield* emulator.injectFault({ target: "token", status: 500, count: 2 })
      yield* failing(provider.forceRefresh(current))
      yield* emulator.injectFault({
        target: "token",
        status: 200,
        body: JSON.stringify({ access_token: "canary-access-token-0123456789", expires_in: "soon" })
      })
      yield* failing(provider.forceRefresh(current))
      yield* emulator.injectFault({ target: "token", malformed: true })
      yield* failing(provider.forceRefresh(current))
      // API faults: 401 twice (forced refresh, then AuthenticationError), a 500
      yield* emulator.injectFault({ target: "api", status: 401, count: 2 })
      yield* failing(client.users.me)
      yield* emulator.injectFault({ target: "api", status: 500, count: 2 })
      yield* failing(client.library.savedTracks({ limit: 2 }))
      // invalid_grant last: the refresh token is then never sent again (DESIGN §4)
      yield* emulator.injectFault({ target: "token", status: 400, body: '{"error":"invalid_grant"}' })
      yield* failing(provider.forceRefresh(yield* provider.getAccessToken))
      // a code exchange that fails: an unknown code
      yield* failing(provider.exchangeCode("an-unknown-authorization-code"))

      // authorizeLocal through the loopback server
      const port = yield* freePort
      const local = yield* AuthorizationCode.make({
        ...providerOptions(emulator),
        redirectUri: `http://127.0.0.1:${port}/callback`
      })
      yield* authorizeLocal({
        openBrowser: false,
        timeout: "10 seconds",
        onAuthorizationUrl: (url) => Effect.promise(() => fetch(url).then((response) => response.text()))
      }).pipe(Effect.provideService(AuthorizationCode, local))

      // what was seen: the client secret, several access tokens, refresh tokens, codes
      const secrets = wire.secrets
      expect(secrets).toContain(emulator.clientSecret)
      expect(secrets).toContain("canary-access-token-0123456789")
      expect(secrets.size).toBeGreaterThanOrEqual(8)
      // the logs were captured at Debug level, and the errors were collected
      expect(lines.some((line) => line.includes("token refreshed"))).toBe(true)
      expect(lines.some((line) => line.includes("level=DEBUG"))).toBe(true)
      expect(errors).toHaveLength(8)

      expect(leaks(lines, secrets)).toEqual([])
      expect(leaks(errors.flatMap(renderings), secrets)).toEqual([])
    }).pipe(
      Effect.provide(wire.layer()),
      Effect.provide(captureLogs(lines)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
  })
})
