/**
 * Secrets never leak (DESIGN sections 3 and 4): canary values for the client secret, tokens, refresh token, code and
 * verifier, echoed back by a hostile server, never reach an error's message or fields, a log line (debug included)
 * or a span attribute.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import {
  AuthorizationCode,
  ClientCredentials,
  OAuthClient,
  ServiceClient,
  TokenCache,
  TokenInfo
} from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { inspect } from "node:util"
import { API_URL, AUTH_URL } from "../support/mock.js"

/** As a console.log of the value would print it. */
const inspectDeep = (value: unknown) => inspect(value, { depth: 10 })

const SECRET = "canary-client-secret-7f3a9c"
const REFRESH = "canary-refresh-token-2b8e41"
const ACCESS = "canary-access-token-5d0c77"
const CODE = "canary-auth-code-91aa3e"
const VERIFIER = "canary-verifier-0123456789abcdefghijklmnopqrstuvwxyz"
const canaries = [SECRET, REFRESH, ACCESS, CODE, VERIFIER, Buffer.from(`id:${SECRET}`).toString("base64")]

/** Everything observable: log lines (all levels) and span names and attributes. */
const observed = () => {
  const lines: Array<string> = []
  const logger = Logger.make((options) => {
    lines.push(`${String(options.logLevel)} ${JSON.stringify(options.message)} ${String(options.cause)}`)
  })
  const spans: Array<string> = []
  const exits: Array<string> = []
  const tracer = Tracer.make({
    span: (options) => {
      spans.push(
        `${options.name} ${JSON.stringify([...((options as { attributes?: Map<string, unknown> }).attributes ?? [])])}`
      )
      const span = new Tracer.NativeSpan(options)
      const end = span.end.bind(span)
      span.end = (endTime, exit) => {
        exits.push(`${options.name} ${inspectDeep(exit)}`)
        end(endTime, exit)
      }
      const attribute = span.attribute.bind(span)
      span.attribute = (key: string, value: unknown) => {
        spans.push(`${options.name} ${key}=${JSON.stringify(value)}`)
        attribute(key, value)
      }
      return span
    }
  })
  const layer = Layer.mergeAll(
    Logger.layer([logger]),
    Layer.succeed(References.MinimumLogLevel, "All"),
    Layer.succeed(Tracer.Tracer, tracer)
  )
  return { lines, spans, exits, layer }
}

const assertClean = (label: string, text: string) => {
  for (const canary of canaries) assert.notInclude(text, canary, `${label} leaks ${canary.slice(0, 12)}…`)
}

/** A server that echoes the whole request (headers and body) into its error answers. */
const echoing = MockHttpClient.layer((request) => {
  const echo = `${JSON.stringify(request.headers)} ${request.body}`
  if (request.url.href.startsWith(AUTH_URL)) {
    return MockHttpClient.json({ error: "invalid_grant", error_description: `you sent: ${echo}` }, 400)
  }
  return MockHttpClient.json({ error: { status: 500, message: `you sent: ${echo}` } }, 400)
})

describe("redaction canaries", () => {
  it.effect("a token endpoint that echoes the request: the error, its payload and the logs hold no secret", () => {
    const { lines, spans, layer } = observed()
    return Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({
        clientId: "id",
        clientSecret: SECRET,
        authUrl: AUTH_URL,
        redirectUri: "http://127.0.0.1:9/cb"
      })
      const errors = [
        yield* Effect.flip(oauth.exchangeCode(CODE, { codeVerifier: VERIFIER })),
        yield* Effect.flip(oauth.refresh(REFRESH)),
        yield* Effect.flip(oauth.clientCredentials())
      ]
      for (const error of errors) {
        assert.strictEqual(error._tag, "AuthenticationError")
        assert.include(error.message, "[redacted]")
        assertClean("error", `${error.message} ${JSON.stringify(error)} ${String(error)} ${inspectDeep(error)}`)
      }
      assertClean("logs", lines.join("\n"))
      assertClean("spans", spans.join("\n"))
      // the platform's http.client spans were there to look at, with the request's headers
      assert.isTrue(
        spans.some((span) => /http\.client|POST/.test(span)),
        spans.join("\n")
      )
      assert.isTrue(lines.length > 0)
    }).pipe(Effect.provide(Layer.merge(echoing, layer)))
  })

  it.effect("a provider whose refresh is rejected, and an API that echoes the bearer: nothing leaks", () => {
    const { lines, spans, layer } = observed()
    return Effect.gen(function* () {
      const cache = yield* TokenCache.memory(
        new TokenInfo({ accessToken: Redacted.make(ACCESS), expiresAt: 0, refreshToken: Redacted.make(REFRESH) })
      )
      const provider = yield* AuthorizationCode.make({
        clientId: "id",
        clientSecret: SECRET,
        authUrl: AUTH_URL,
        tokenCache: cache
      })
      const refreshError = yield* Effect.flip(provider.getAccessToken)
      assertClean("refresh error", `${refreshError.message} ${JSON.stringify(refreshError)}`)
      const client = yield* ServiceClient.makeWith(
        {
          getAccessToken: Effect.succeed(Redacted.make(ACCESS)),
          forceRefresh: () => Effect.succeed(Redacted.make(ACCESS))
        },
        { apiUrl: API_URL }
      )
      const apiError = yield* Effect.flip(client.albums.get("x"))
      assert.strictEqual(apiError._tag, "ApiError")
      assertClean("API error", `${apiError.message} ${JSON.stringify(apiError)}`)
      assertClean("logs", lines.join("\n"))
      assertClean("spans", spans.join("\n"))
    }).pipe(Effect.provide(Layer.merge(echoing, layer)))
  })

  it.effect(
    "a transport failure that quotes the request it was sending: its message, cause and spans hold no secret",
    () => {
      const { lines, spans, exits, layer } = observed()
      // a client (or proxy) error that quotes the request: headers and body
      const quoting = MockHttpClient.layer((request) => ({
        transportError: `socket hang up while sending ${JSON.stringify(request.headers)} ${request.body}`
      }))
      return Effect.gen(function* () {
        const oauth = yield* OAuthClient.make({
          clientId: "id",
          clientSecret: SECRET,
          authUrl: AUTH_URL,
          redirectUri: "http://127.0.0.1:9/cb",
          maxRetries: 0
        })
        const tokenError = yield* Effect.flip(oauth.refresh(REFRESH))
        const client = yield* ServiceClient.makeWith(
          {
            getAccessToken: Effect.succeed(Redacted.make(ACCESS)),
            forceRefresh: () => Effect.succeed(Redacted.make(ACCESS))
          },
          { apiUrl: API_URL, maxRetries: 0 }
        )
        const apiError = yield* Effect.flip(client.albums.get("x"))
        for (const error of [tokenError, apiError]) {
          assert.strictEqual(error._tag, "TransportError")
          assert.include(error.message, "[redacted]")
          const cause = (error as { readonly cause?: unknown }).cause
          assertClean("error", `${error.message} ${JSON.stringify(error)} ${String(cause)} ${inspectDeep(error)}`)
        }
        assertClean("logs", lines.join("\n"))
        // the http.client spans end with the failure: what they hold is masked too
        assert.isTrue(
          spans.some((span) => span.startsWith("http.client POST")),
          spans.join("\n")
        )
        assertClean("spans", spans.join("\n"))
        assertClean("span exits", exits.join("\n"))
      }).pipe(Effect.provide(Layer.merge(quoting, layer)))
    }
  )

  it.effect("ClientCredentials with a wrong secret: the message names the failure, not the secret", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ clientId: "id", clientSecret: SECRET, authUrl: AUTH_URL })
      const error = yield* Effect.flip(provider.getAccessToken)
      assert.match(error.message, /token endpoint rejected the request \(400 invalid_grant/)
      assertClean("error", `${error.message} ${JSON.stringify(error)}`)
    }).pipe(Effect.provide(echoing))
  )

  it("a TokenInfo shows no token in its string, JSON or inspect forms", () => {
    const token = new TokenInfo({
      accessToken: Redacted.make(ACCESS),
      expiresAt: 1,
      refreshToken: Redacted.make(REFRESH)
    })
    assertClean("TokenInfo", `${String(token)} ${JSON.stringify(token)} ${inspectDeep(token)}`)
  })
})
