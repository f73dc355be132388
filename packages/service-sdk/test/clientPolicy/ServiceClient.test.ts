import { describe, expect, it } from "@effect/vitest"
import {
  ConfigProvider,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  Redacted,
  Schema,
  TestClock,
  Tracer
} from "effect"
import { type ConfigurationError, ServiceClient, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { oauthError, requestCount, requests } from "../fixtures.js"
import {
  API_URL,
  apiRequests,
  authorizations,
  clientCredentialsClientLayer,
  clientLayer,
  expired,
  failureOf,
  makeCountingProvider,
  ok,
  rejectsFirstToken,
  routed,
  settle,
  status,
  tokenRequests,
  valueOf
} from "../ServiceClient.helpers.js"

const TestTokenProviderLayer = Layer.succeed(TokenProvider, TokenProvider.static("tok-1"))

const get = (path: string) => Effect.flatMap(ServiceClient, (client) => client.request("GET", path))
const post = (path: string, body: unknown) =>
  Effect.flatMap(ServiceClient, (client) => client.request("POST", path, { body }))

describe("ServiceClient request policy: 5xx and transport errors", () => {
  it.effect("3 × 503 then 200: four requests, the backoff in between", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(get("/me"))
      yield* TestClock.adjust("200 millis") // the first backoff is at least 250 ms
      expect(yield* requestCount).toBe(1)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      const exit = yield* settle(Fiber.join(fiber))
      expect(valueOf(exit)).toEqual({ id: "u1" })
      expect(yield* requestCount).toBe(4)
    }).pipe(Effect.provide(clientLayer(MockHttpClient.script(status(503), status(503), status(503), ok({ id: "u1" })))))
  )

  it.effect("persistent 503: ApiError after maxRetries + 1 requests, with status, payload and message", () =>
    Effect.gen(function* () {
      const error = failureOf(yield* settle(get("/me")))
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(503)
      expect(error.payload).toEqual({ error: { status: 503, message: "status 503" } })
      expect(error.message).toContain("status 503")
      expect(yield* requestCount).toBe(4)
    }).pipe(Effect.provide(clientLayer(() => status(503))))
  )

  it.effect("maxRetries bounds the attempts (maxRetries 1: two requests; 0: one)", () =>
    Effect.gen(function* () {
      const twice = yield* settle(get("/me")).pipe(
        Effect.zip(requestCount),
        Effect.provide(clientLayer(() => status(500), { maxRetries: 1 }))
      )
      expect(twice[1]).toBe(2)
      const once = yield* settle(get("/me")).pipe(
        Effect.zip(requestCount),
        Effect.provide(clientLayer(() => status(500), { maxRetries: 0 }))
      )
      expect(once[1]).toBe(1)
      expect(Exit.isFailure(once[0])).toBe(true)
    })
  )

  it.effect("connection errors are retried, then succeed", () =>
    Effect.gen(function* () {
      const exit = yield* settle(get("/me"))
      expect(valueOf(exit)).toEqual({ id: "u1" })
      expect(yield* requestCount).toBe(3)
    }).pipe(
      Effect.provide(
        clientLayer(
          MockHttpClient.script(
            { transportError: "connect ECONNREFUSED 127.0.0.1:4020" },
            { transportError: "socket hang up" },
            ok({ id: "u1" })
          )
        )
      )
    )
  )

  it.effect("persistent connection errors: TransportError after maxRetries + 1 requests", () =>
    Effect.gen(function* () {
      const error = failureOf(yield* settle(get("/me")))
      expect(error._tag).toBe("TransportError")
      expect(error.message).toContain("socket hang up")
      expect(error.message).toContain("GET")
      expect(yield* requestCount).toBe(4)
    }).pipe(Effect.provide(clientLayer(() => ({ transportError: "socket hang up" }))))
  )

  it.effect("a hanging attempt times out and is retried", () =>
    Effect.gen(function* () {
      const exit = yield* settle(get("/me"))
      expect(valueOf(exit)).toEqual({ id: "u1" })
      expect(yield* requestCount).toBe(3)
    }).pipe(
      Effect.provide(
        clientLayer(MockHttpClient.script(Effect.never, Effect.never, ok({ id: "u1" })), { timeout: "2 seconds" })
      )
    )
  )

  it.effect("attempts that keep hanging: TransportError after maxRetries + 1 timeouts", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(get("/me"))
      yield* TestClock.adjust("1900 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      const error = failureOf(yield* settle(Fiber.join(fiber)))
      expect(error._tag).toBe("TransportError")
      expect(error.message).toContain("did not answer")
      expect(yield* requestCount).toBe(3)
    }).pipe(Effect.provide(clientLayer(() => Effect.never, { timeout: "2 seconds", maxRetries: 2 })))
  )

  it.effect("POST is not retried on 500, 503 without Retry-After, or a broken connection", () =>
    Effect.gen(function* () {
      for (const answer of [status(500), status(503), { transportError: "socket hang up" }]) {
        const [exit, count] = yield* settle(post("/playlists/p/tracks", { uris: [] })).pipe(
          Effect.zip(requestCount),
          Effect.provide(clientLayer(() => answer))
        )
        expect(Exit.isFailure(exit)).toBe(true)
        expect(count).toBe(1)
      }
    })
  )

  it.effect("POST is retried on 429, on 503 with Retry-After, and on a connection never established", () =>
    Effect.gen(function* () {
      for (const answer of [
        status(429),
        status(503, { "retry-after": "1" }),
        { transportError: "connect ECONNREFUSED 127.0.0.1:4020" }
      ]) {
        const [exit, count] = yield* settle(post("/playlists/p/tracks", { uris: [] })).pipe(
          Effect.zip(requestCount),
          Effect.provide(clientLayer(MockHttpClient.script(answer, ok({ snapshot_id: "s" }))))
        )
        expect(valueOf(exit)).toEqual({ snapshot_id: "s" })
        expect(count).toBe(2)
      }
    })
  )

  it.effect("PUT is idempotent: retried on 500", () =>
    Effect.gen(function* () {
      const exit = yield* settle(Effect.flatMap(ServiceClient, (client) => client.request("PUT", "/me/tracks")))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(yield* requestCount).toBe(2)
    }).pipe(Effect.provide(clientLayer(MockHttpClient.script(status(500), { status: 200 }))))
  )
})

describe("ServiceClient request policy: 429 and Retry-After", () => {
  it.effect("Retry-After: 2 waits two seconds (not done at 1.9 s, done after 2 s)", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(get("/me"))
      yield* TestClock.adjust("1900 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      expect(yield* requestCount).toBe(1)
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toEqual({ id: "u1" })
      expect(yield* requestCount).toBe(2)
    }).pipe(Effect.provide(clientLayer(MockHttpClient.script(status(429, { "retry-after": "2" }), ok({ id: "u1" })))))
  )

  it.effect("Retry-After longer than maxRetryAfter fails at once with RateLimitError carrying it", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(get("/me"))
      expect(error._tag).toBe("RateLimitError")
      if (error._tag !== "RateLimitError") return
      expect(Duration.toSeconds(error.retryAfter)).toBe(3600)
      expect(error.message).toContain("maxRetryAfter")
      expect(yield* requestCount).toBe(1)
    }).pipe(Effect.provide(clientLayer(() => status(429, { "retry-after": "3600" }))))
  )

  it.effect("maxRetryAfter is an option", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(get("/me"))
      expect(error._tag).toBe("RateLimitError")
      expect(yield* requestCount).toBe(1)
    }).pipe(Effect.provide(clientLayer(() => status(429, { "retry-after": "10" }), { maxRetryAfter: "5 seconds" })))
  )

  it.effect("429 without Retry-After waits one second", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(get("/me"))
      yield* TestClock.adjust("900 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toEqual({ id: "u1" })
      expect(yield* requestCount).toBe(2)
    }).pipe(Effect.provide(clientLayer(MockHttpClient.script(status(429), ok({ id: "u1" })))))
  )

  it.effect("Retry-After as an HTTP date", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2025-01-01T00:00:00Z"))
      const fiber = yield* Effect.fork(get("/me"))
      yield* TestClock.adjust("4900 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toEqual({ id: "u1" })
      expect(yield* requestCount).toBe(2)
    }).pipe(
      Effect.provide(
        clientLayer(
          MockHttpClient.script(status(429, { "retry-after": "Wed, 01 Jan 2025 00:00:05 GMT" }), ok({ id: "u1" }))
        )
      )
    )
  )

  it.effect(
    "429 that outlasts the retries: RateLimitError with the last Retry-After, after maxRetries + 1 requests",
    () =>
      Effect.gen(function* () {
        const error = failureOf(yield* settle(get("/me")))
        expect(error._tag).toBe("RateLimitError")
        if (error._tag !== "RateLimitError") return
        expect(Duration.toSeconds(error.retryAfter)).toBe(3)
        expect(yield* requestCount).toBe(4)
      }).pipe(Effect.provide(clientLayer(() => status(429, { "retry-after": "3" }))))
  )
})

describe("ServiceClient request policy: 401 and tokens", () => {
  it.effect("401 then 200: exactly one forced refresh of the rejected token, and the retry carries the new one", () =>
    Effect.gen(function* () {
      const provider = yield* makeCountingProvider
      const result = yield* get("/me").pipe(
        Effect.zip(authorizations),
        Effect.provide(clientLayer(rejectsFirstToken({ id: "u1" }), {}, provider.layer))
      )
      expect(result[0]).toEqual({ id: "u1" })
      expect(result[1]).toEqual(["Bearer tok-1", "Bearer tok-2"])
      expect(yield* provider.rejected).toEqual(["tok-1"])
    })
  )

  it.effect("401 twice: AuthenticationError (401, the API's body) after one refresh", () =>
    Effect.gen(function* () {
      const provider = yield* makeCountingProvider
      const [error, count] = yield* Effect.flip(get("/me")).pipe(
        Effect.zip(requestCount),
        Effect.provide(clientLayer(() => expired, {}, provider.layer))
      )
      expect(error._tag).toBe("AuthenticationError")
      if (error._tag !== "AuthenticationError") return
      expect(error.status).toBe(401)
      expect(error.payload).toEqual({ error: "invalid_token", error_description: "The access token expired" })
      expect(error.message).toContain("The access token expired")
      expect(count).toBe(2)
      expect(yield* provider.rejected).toEqual(["tok-1"])
    })
  )

  it.effect("the bearer header is built per request from getAccessToken", () =>
    Effect.gen(function* () {
      const provider = yield* makeCountingProvider
      const seen = yield* Effect.gen(function* () {
        yield* get("/me")
        yield* provider.setGeneration(7)
        yield* get("/me")
        return yield* authorizations
      }).pipe(Effect.provide(clientLayer(() => ok(), {}, provider.layer)))
      expect(seen).toEqual(["Bearer tok-1", "Bearer tok-7"])
      expect(yield* provider.gets).toBe(2)
    })
  )

  it.effect("every retry attempt asks the provider again", () =>
    Effect.gen(function* () {
      const provider = yield* makeCountingProvider
      yield* settle(get("/me")).pipe(
        Effect.provide(clientLayer(MockHttpClient.script(status(503), status(503), ok()), {}, provider.layer))
      )
      expect(yield* provider.gets).toBe(3)
    })
  )

  it.effect("real ClientCredentials: 401 then 200 costs one token POST for the refresh", () =>
    Effect.gen(function* () {
      expect(yield* get("/me")).toEqual({ id: "u1" })
      expect((yield* tokenRequests).length).toBe(2)
      expect(yield* authorizations).toEqual(["Bearer tok-1", "Bearer tok-2"])
      expect(yield* get("/me")).toEqual({ id: "u1" })
      expect((yield* tokenRequests).length).toBe(2)
    }).pipe(Effect.provide(clientCredentialsClientLayer(routed(rejectsFirstToken({ id: "u1" })))))
  )

  it.effect("50 concurrent requests all rejected with the same token: one refresh (one token POST)", () =>
    Effect.gen(function* () {
      const results = yield* Effect.all(
        Array.from({ length: 50 }, () => get("/me")),
        { concurrency: "unbounded" }
      )
      expect(results).toHaveLength(50)
      expect(results.every((result) => (result as { id: string }).id === "u1")).toBe(true)
      const tokens = yield* tokenRequests
      expect(tokens.length).toBe(2) // the first token, then the one refresh
      const auth = yield* authorizations
      expect(auth.filter((header) => header === "Bearer tok-1").length).toBe(50)
      expect(auth.filter((header) => header === "Bearer tok-2").length).toBe(50)
    }).pipe(Effect.provide(clientCredentialsClientLayer(routed(rejectsFirstToken({ id: "u1" })))))
  )

  it.effect("a failing token endpoint: at most maxRetries + 1 token POSTs per call, no API request", () =>
    Effect.gen(function* () {
      const error = failureOf(yield* settle(get("/me")))
      expect(error._tag).toBe("TransportError")
      expect((yield* tokenRequests).length).toBe(4)
      expect((yield* apiRequests).length).toBe(0)
      failureOf(yield* settle(get("/me")))
      expect((yield* tokenRequests).length).toBe(8)
    }).pipe(
      Effect.provide(
        clientCredentialsClientLayer(
          routed(
            () => ok(),
            () => status(500)
          )
        )
      )
    )
  )

  it.effect("maxRetries also bounds the provider's token POSTs", () =>
    Effect.gen(function* () {
      failureOf(yield* settle(get("/me")))
      expect((yield* tokenRequests).length).toBe(2)
      expect((yield* apiRequests).length).toBe(0)
    }).pipe(
      Effect.provide(
        clientCredentialsClientLayer(
          routed(
            () => ok(),
            () => status(500)
          ),
          { maxRetries: 1 }
        )
      )
    )
  )

  it.effect("a refresh the token endpoint refuses surfaces as is (no retry by the client)", () =>
    Effect.gen(function* () {
      const error = failureOf(yield* settle(get("/me")))
      expect(error._tag).toBe("AuthenticationError")
      if (error._tag !== "AuthenticationError") return
      expect(error.payload).toEqual({ error: "invalid_client" })
      expect((yield* tokenRequests).length).toBe(2)
      expect((yield* apiRequests).length).toBe(1)
    }).pipe(
      Effect.provide(
        clientCredentialsClientLayer(
          routed(
            () => expired,
            (_request, call) =>
              call === 0 ? ok({ access_token: "tok-1", expires_in: 3600 }) : oauthError(401, "invalid_client")
          )
        )
      )
    )
  )

  it.effect("layerAccessToken: the fixed token on every request, no provider, and a 401 is final", () =>
    Effect.gen(function* () {
      expect(yield* get("/albums/a")).toEqual({ id: "a" })
      const error = yield* Effect.flip(get("/me"))
      expect(error._tag).toBe("AuthenticationError")
      if (error._tag !== "AuthenticationError") return
      expect(error.status).toBe(401)
      expect(error.payload).toEqual({ error: "invalid_token", error_description: "The access token expired" })
      expect(yield* authorizations).toEqual(["Bearer fixed-token", "Bearer fixed-token"])
      expect(Option.isNone(yield* Effect.serviceOption(TokenProvider))).toBe(true)
    }).pipe(
      Effect.provide(
        ServiceClient.layerAccessToken(Redacted.make("fixed-token"), { apiUrl: API_URL }).pipe(
          Layer.provideMerge(
            MockHttpClient.layer((request) => (request.url.pathname === "/v1/me" ? expired : ok({ id: "a" })))
          )
        )
      )
    )
  )

  it.effect("a fixed-token TokenProvider (TestTokenProvider): 401 → AuthenticationError after one request", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(get("/me"))
      expect(error._tag).toBe("AuthenticationError")
      expect(yield* requestCount).toBe(1)
    }).pipe(Effect.provide(clientLayer(() => expired)))
  )
})

describe("ServiceClient.request", () => {
  it.effect("404: ApiError with status, payload and the API's message", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(get("/albums/nope"))
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(404)
      expect(error.payload).toEqual({ error: { status: 404, message: "Non existing id: 'nope'" } })
      expect(error.message).toBe("GET /albums/nope failed with 404: Non existing id: 'nope'")
      expect(yield* requestCount).toBe(1)
    }).pipe(
      Effect.provide(
        clientLayer(() => MockHttpClient.json({ error: { status: 404, message: "Non existing id: 'nope'" } }, 404))
      )
    )
  )

  it.effect("a non-JSON error body: ApiError without payload", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(get("/x"))
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(400)
      expect(error.payload).toBeUndefined()
    }).pipe(Effect.provide(clientLayer(() => ({ status: 400, body: "<html>bad</html>" }))))
  )

  it.effect("204: no body (undefined)", () =>
    Effect.gen(function* () {
      expect(yield* get("/me/player")).toBeUndefined()
    }).pipe(Effect.provide(clientLayer(() => ({ status: 204 }))))
  )

  it.effect("a 2xx answer that is not JSON: ApiError", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(get("/me"))
      expect(error._tag).toBe("ApiError")
      expect(error.message).toContain("not JSON")
    }).pipe(Effect.provide(clientLayer(() => ({ status: 200, body: "hello" }))))
  )

  it.effect("method, path under apiUrl, query, JSON body and Accept", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      yield* client.request("POST", "/things/a%20b", {
        query: { limit: 5, tags: ["x", "y"], skip: undefined, none: null },
        body: { name: "n" }
      })
      const [request] = yield* requests
      expect(request!.method).toBe("POST")
      expect(request!.url.href).toBe(`${API_URL}/things/a%20b?limit=5&tags=x&tags=y`)
      expect(JSON.parse(request!.body)).toEqual({ name: "n" })
      expect(request!.headers["content-type"]).toBe("application/json")
      expect(request!.headers.accept).toBe("application/json")
      expect(request!.headers.authorization).toBe("Bearer tok-1")
    }).pipe(Effect.provide(clientLayer(() => ok())))
  )

  it.effect("with a schema: decoded, unknown fields dropped; a missing field is an ApiError naming it", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const Thing = Schema.Struct({ id: Schema.String, size: Schema.Number })
      expect(yield* client.request("GET", "/thing", { schema: Thing })).toStrictEqual({ id: "t", size: 3 })
      const error = yield* Effect.flip(client.request("GET", "/thing", { schema: Thing }))
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(200)
      expect(error.message).toContain("size is missing")
      expect(error.message.length).toBeLessThan(300)
    }).pipe(
      Effect.provide(
        clientLayer(
          MockHttpClient.script(ok({ id: "t", size: 3, extra: "dropped" }), ok({ id: "t", blob: "x".repeat(5000) }))
        )
      )
    )
  )

  it.effect("the request is a span named ServiceClient.request with method and path, no headers", () =>
    Effect.gen(function* () {
      const spans: Array<{ name: string; attributes: ReadonlyMap<string, unknown> }> = []
      const base = yield* Effect.tracer
      const recording = Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) => {
          const span = base.span(name, parent, context, links, startTime, kind, options)
          spans.push(span)
          return span
        },
        context: base.context
      })
      yield* get("/me").pipe(Effect.withTracer(recording))
      const span = spans.find((candidate) => candidate.name === "ServiceClient.request")
      expect(span).toBeDefined()
      expect(span!.attributes.get("http.request.method")).toBe("GET")
      expect(span!.attributes.get("url.path")).toBe("/me")
      for (const recorded of spans) {
        for (const value of recorded.attributes.values()) expect(String(value)).not.toContain("tok-1")
      }
    }).pipe(Effect.provide(clientLayer(() => ok())))
  )
})

describe("ServiceClient.http", () => {
  it.effect("relative paths go under apiUrl, authenticated; 4xx come back as responses", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/albums/x")
      expect(response.status).toBe(404)
      yield* http.get("me")
      yield* http.get(`${API_URL}/me/tracks?offset=20`)
      const seen = yield* requests
      expect(seen.map((request) => request.url.href)).toEqual([
        `${API_URL}/albums/x`,
        `${API_URL}/me`,
        `${API_URL}/me/tracks?offset=20`
      ])
      expect(seen.every((request) => request.headers.authorization === "Bearer tok-1")).toBe(true)
    }).pipe(Effect.provide(clientLayer(MockHttpClient.script(status(404), ok()))))
  )

  it.effect("a 5xx that outlasts the retries is returned, body intact, after maxRetries + 1 requests", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = valueOf(yield* settle(http.get("/me")))
      expect(response.status).toBe(502)
      expect(yield* response.json).toEqual({ error: { status: 502, message: "status 502" } })
      expect(yield* requestCount).toBe(4)
    }).pipe(Effect.provide(clientLayer(() => status(502))))
  )

  it.effect("the same 401 policy: one refresh, then the retried response", () =>
    Effect.gen(function* () {
      const provider = yield* makeCountingProvider
      const response = yield* Effect.flatMap(ServiceClient, ({ http }) => http.get("/me")).pipe(
        Effect.provide(clientLayer(rejectsFirstToken(), {}, provider.layer))
      )
      expect(response.status).toBe(200)
      expect(yield* provider.rejected).toEqual(["tok-1"])
    })
  )

  it.effect("responses hold the request without the Authorization header", () =>
    Effect.gen(function* () {
      const { http } = yield* ServiceClient
      const response = yield* http.get("/me")
      expect(response.request.headers.authorization).toBeUndefined()
      const error = yield* Effect.flip(response.json)
      expect(error._tag).toBe("ResponseError")
      expect(error.request.headers.authorization).toBeUndefined()
      expect(JSON.stringify(error)).not.toContain("tok-1")
    }).pipe(Effect.provide(clientLayer(() => ({ status: 200, body: "not json" }))))
  )
})

describe("ServiceClient options", () => {
  it.effect("apiUrl from the option, the environment, else the default", () =>
    Effect.gen(function* () {
      const urlOf = (layer: Layer.Layer<ServiceClient | MockHttpClient, ConfigurationError>) =>
        get("/me").pipe(
          Effect.zipRight(requests),
          Effect.map((all) => all[0]!.url.href),
          Effect.provide(layer)
        )
      const mock = MockHttpClient.layer(() => ok())
      const provider = Layer.succeed(TokenProvider, TokenProvider.static("t"))
      const withEnv = Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map([["SERVICE_SDK_API_URL", "http://127.0.0.1:4999/v2/"]]))
      )
      const noEnv = Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))

      const explicit = ServiceClient.layer({ apiUrl: "http://127.0.0.1:4888/api" }).pipe(
        Layer.provide(provider),
        Layer.provideMerge(mock)
      )
      expect(yield* withEnv(urlOf(explicit))).toBe("http://127.0.0.1:4888/api/me")
      const fromEnv = ServiceClient.layer().pipe(Layer.provide(provider), Layer.provideMerge(mock))
      expect(yield* withEnv(urlOf(fromEnv))).toBe("http://127.0.0.1:4999/v2/me")
      expect(yield* noEnv(urlOf(fromEnv))).toBe("https://api.service.example/v1/me")
    })
  )

  it.effect("an invalid apiUrl: make and layer fail with ConfigurationError in the error channel", () =>
    Effect.gen(function* () {
      const made = yield* Effect.flip(ServiceClient.make({ apiUrl: "not a url" })).pipe(
        Effect.provide(
          Layer.merge(
            TestTokenProviderLayer,
            MockHttpClient.layer(() => ok())
          )
        )
      )
      expect(made._tag).toBe("ConfigurationError")
      expect(made.message).toContain("apiUrl")
      const exit = yield* Effect.exit(
        get("/me").pipe(
          Effect.provide(
            ServiceClient.layer({ apiUrl: "ftp://127.0.0.1/x" }).pipe(
              Layer.provide(
                Layer.merge(
                  TestTokenProviderLayer,
                  MockHttpClient.layer(() => ok())
                )
              )
            )
          )
        )
      )
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail").toBe(true)
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        expect(exit.cause.error._tag).toBe("ConfigurationError")
        expect(exit.cause.error.message).toContain("apiUrl")
      }
    })
  )

  it.effect("layerClientCredentials without credentials fails with ConfigurationError naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        get("/me").pipe(
          Effect.provide(
            ServiceClient.layerClientCredentials({ apiUrl: API_URL }).pipe(
              Layer.provide(MockHttpClient.layer(() => ok()))
            )
          ),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
        )
      )
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toContain("SERVICE_SDK_CLIENT_ID")
    })
  )
})
