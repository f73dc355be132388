/** The client's request policy (DESIGN section 4): bearer, 401 → one forced refresh, 429, 5xx retries, 204. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { TestClock } from "effect/testing"
import { ServiceClient } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { API_URL, apiClientLayer, apiRequests, apiServer, requests, tokenRequests } from "../support/mock.js"

const album = { id: "a1", name: "Album", artists: [{ id: null, name: "Local" }], tracks: { items: [] } }

const server = apiServer
const clientLayer = apiClientLayer

describe("ServiceClient request policy", () => {
  it.effect("sends the bearer token and decodes the typed resource (null ids of local files)", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const result = yield* client.albums.get("a1")
      assert.strictEqual(result.artists[0]!.id, null)
      const [call] = yield* apiRequests
      assert.strictEqual(call!.headers.authorization, "Bearer token-1")
      assert.strictEqual(call!.url.href, `${API_URL}/albums/a1`)
    }).pipe(Effect.provide(clientLayer(server(() => MockHttpClient.json(album)))))
  )

  it.effect("401 forces one refresh and one retry with the new token", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      yield* client.albums.get("a1")
      const calls = yield* apiRequests
      assert.deepStrictEqual(
        calls.map((c) => c.headers.authorization),
        ["Bearer token-1", "Bearer token-2"]
      )
      assert.strictEqual((yield* tokenRequests).length, 2)
    }).pipe(
      Effect.provide(
        clientLayer(
          server((_bearer, n) =>
            n === 0
              ? MockHttpClient.json({ error: { status: 401, message: "The access token expired" } }, 401)
              : MockHttpClient.json(album)
          )
        )
      )
    )
  )

  it.effect("a second 401 is an AuthenticationError (no loop): 2 API calls, 2 token requests", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.albums.get("a1"))
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.strictEqual((yield* apiRequests).length, 2)
      assert.strictEqual((yield* tokenRequests).length, 2)
    }).pipe(
      Effect.provide(clientLayer(server(() => MockHttpClient.json({ error: { status: 401, message: "no" } }, 401))))
    )
  )

  it.effect("429 waits Retry-After then succeeds", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const fiber = yield* Effect.forkChild(client.albums.get("a1"))
      yield* TestClock.adjust("2999 millis")
      assert.strictEqual((yield* apiRequests).length, 1)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      assert.strictEqual((yield* apiRequests).length, 2)
    }).pipe(
      Effect.provide(
        clientLayer(
          server((_b, n) => (n === 0 ? { status: 429, headers: { "retry-after": "3" } } : MockHttpClient.json(album)))
        )
      )
    )
  )

  it.effect("429 with Retry-After above maxRetryAfter fails fast with RateLimitError", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.albums.get("a1"))
      assert.strictEqual(error._tag, "RateLimitError")
      assert.strictEqual((yield* apiRequests).length, 1)
    }).pipe(
      Effect.provide(
        clientLayer(
          server(() => ({ status: 429, headers: { "retry-after": "120" } })),
          { maxRetryAfter: "60 seconds" }
        )
      )
    )
  )

  it.effect("5xx is retried for GET; a 5xx that outlasts the retries is ApiError with its status", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const fiber = yield* Effect.forkChild(Effect.flip(client.albums.get("a1")))
      yield* TestClock.adjust("30 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ApiError")
      assert.strictEqual(error._tag === "ApiError" && error.status, 503)
      assert.strictEqual((yield* apiRequests).length, 3)
    }).pipe(
      Effect.provide(
        clientLayer(
          server(() => ({ status: 503 })),
          { maxRetries: 2 }
        )
      )
    )
  )

  it.effect("POST is not retried on a 500 (not idempotent)", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.playlists.addItems("p1", ["spotify:track:1"]))
      assert.strictEqual(error._tag, "ApiError")
      const calls = yield* apiRequests
      assert.strictEqual(calls.length, 1)
      assert.strictEqual(calls[0]!.url.pathname, "/v1/playlists/p1/items")
    }).pipe(Effect.provide(clientLayer(server(() => ({ status: 500 })))))
  )

  it.effect("204 from the player is Option.none()", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const state = yield* client.player.playbackState
      assert.isTrue(Option.isNone(state))
    }).pipe(Effect.provide(clientLayer(server(() => ({ status: 204 })))))
  )

  it.effect("token failures inside a request surface as is, not retried again by the client", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.albums.get("a1"))
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(clientLayer(() => MockHttpClient.json({ error: "invalid_client" }, 401))))
  )

  it.effect("a bad option is a ConfigurationError in the layer's error channel", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(
          Effect.gen(function* () {
            return yield* ServiceClient
          }),
          clientLayer(
            server(() => ({ status: 200 })),
            { maxRetries: -1 }
          )
        )
      )
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.match(error.message, /maxRetries/)
    })
  )
})
