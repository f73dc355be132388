import { inspect } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Logger, LogLevel, Redacted } from "effect"
import { ServiceClient } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"
import { API_URL, expired, ok, settle, status } from "../ServiceClient.helpers.js"

const CANARY = "canary-7f3a9c1e-access-token"

const fixedClient = (handler: MockHandler, options: ServiceClient.Options = {}) =>
  ServiceClient.layerAccessToken(Redacted.make(CANARY), { apiUrl: API_URL, maxRetries: 1, ...options }).pipe(
    Layer.provideMerge(MockHttpClient.layer(handler))
  )

/** Every way an error can be shown: message, String, JSON, inspect (deep), and its cause. */
const renderings = (error: unknown): ReadonlyArray<string> => [
  String(error),
  JSON.stringify(error) ?? "",
  inspect(error, { depth: 20 }),
  inspect((error as { cause?: unknown }).cause, { depth: 20 }),
  (error as { message?: string }).message ?? ""
]

describe("ServiceClient never shows the token", () => {
  it.effect("in errors, their causes, the Cause, and debug logs (canary)", () =>
    Effect.gen(function* () {
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logs.push(inspect(message, { depth: 10 }))
      })
      const scenarios: ReadonlyArray<[string, MockHandler, ServiceClient.Options?]> = [
        ["401 with a fixed token", () => expired],
        ["transport error", () => ({ transportError: "connect ECONNREFUSED 127.0.0.1:4020" })],
        ["timeout", () => Effect.never, { timeout: "1 second" }],
        ["404", () => status(404)],
        ["503", () => status(503)],
        ["429 too long", () => status(429, { "retry-after": "3600" })],
        ["429 exhausted", () => status(429)]
      ]
      for (const [name, handler, options] of scenarios) {
        const exit = yield* settle(Effect.flatMap(ServiceClient, (client) => client.request("GET", "/me"))).pipe(
          Effect.provide(fixedClient(handler, options)),
          Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
          Logger.withMinimumLogLevel(LogLevel.All)
        )
        expect(Exit.isFailure(exit), name).toBe(true)
        if (Exit.isSuccess(exit)) continue
        for (const text of [...renderings(Cause.squash(exit.cause)), Cause.pretty(exit.cause)]) {
          expect(text, name).not.toContain(CANARY)
        }
      }
      expect(logs.length).toBeGreaterThan(0)
      for (const line of logs) expect(line).not.toContain(CANARY)
    })
  )

  it.effect("the request really carried the token (the canary is live)", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      yield* client.request("GET", "/me")
      const [request] = yield* (yield* MockHttpClient).requests
      expect(request!.headers.authorization).toBe(`Bearer ${CANARY}`)
    }).pipe(Effect.provide(fixedClient(() => ok())))
  )

  it.effect("responses from http, and errors reading them, do not hold the token", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/me")
      for (const text of [
        inspect(response, { depth: 20 }),
        JSON.stringify(response),
        inspect(response.request, { depth: 20 })
      ]) {
        expect(text).not.toContain(CANARY)
      }
      const error = yield* Effect.flip(response.json)
      for (const text of renderings(error)) expect(text).not.toContain(CANARY)
      expect(inspect(error.request.headers)).not.toContain(CANARY)
    }).pipe(Effect.provide(fixedClient(() => ({ status: 200, body: "{broken" }))))
  )
})
