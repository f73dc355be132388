/** the contract (4): the data API client's policy (bearer, retries, 401, 429, 204, server text). */
import assert from "node:assert/strict"
import { ALBUM_ID } from "../fakeServer.js"
import type { Scenario } from "../scenario.js"
import { credentials, failure, hasControlOrBidi, ok } from "../support.js"

export const clientPolicy: ReadonlyArray<Scenario> = [
  {
    id: "client: the bearer token on every request; a typed resource decodes the body",
    run: async (driver, server) => {
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, provider: credentials(server) }))
      assert.equal(ok(await api.albumName(ALBUM_ID)), "Conformance Album")
      ok(await api.get(`/albums/${ALBUM_ID}`))
      const requests = server.apiRequests()
      assert.deepEqual(
        requests.map((request) => [request.path, request.headers.authorization]),
        [
          [`/v1/albums/${ALBUM_ID}`, "Bearer token-1"],
          [`/v1/albums/${ALBUM_ID}`, "Bearer token-1"]
        ]
      )
      await api.close()
    }
  },
  {
    id: "client: a 401 forces one refresh and one retry with the new token",
    run: async (driver, server) => {
      server.onApi({ status: 401, body: { error: { status: 401, message: "The access token expired" } } })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, provider: credentials(server) }))
      assert.equal(ok(await api.albumName(ALBUM_ID)), "Conformance Album")
      assert.deepEqual(
        server.apiRequests().map((request) => request.headers.authorization),
        ["Bearer token-1", "Bearer token-2"]
      )
      assert.equal(server.tokenRequests().length, 2)
      await api.close()
    }
  },
  {
    id: "client: a second 401 after the forced refresh is an AuthenticationError",
    run: async (driver, server) => {
      const expired = { status: 401, body: { error: { status: 401, message: "The access token expired" } } }
      server.onApi(expired, expired, expired)
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, provider: credentials(server) }))
      failure(await api.albumName(ALBUM_ID), "AuthenticationError")
      assert.equal(server.apiRequests().length, 2)
      await api.close()
    }
  },
  {
    id: "client: a fixed access token is sent as it is; a 401 cannot be refreshed",
    run: async (driver, server) => {
      server.onApi({ status: 401, body: { error: { status: 401, message: "The access token expired" } } })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, accessToken: "fixed-token" }))
      failure(await api.get("/me"), "AuthenticationError")
      assert.equal(server.apiRequests()[0]?.headers.authorization, "Bearer fixed-token")
      assert.equal(server.tokenRequests().length, 0)
      await api.close()
    }
  },
  {
    id: "client: a 429 whose Retry-After exceeds maxRetryAfter fails at once with RateLimitError",
    run: async (driver, server) => {
      server.onApi({ status: 429, headers: { "retry-after": "120" } })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, accessToken: "t" }))
      failure(await api.get("/me"), "RateLimitError")
      assert.equal(server.apiRequests().length, 1)
      await api.close()
    }
  },
  {
    id: "client: a 429 with a short Retry-After is waited out and retried",
    run: async (driver, server) => {
      server.onApi({ status: 429, headers: { "retry-after": "1" } })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, accessToken: "t" }))
      const started = Date.now()
      assert.equal(ok(await api.albumName(ALBUM_ID)), "Conformance Album")
      assert.ok(Date.now() - started >= 900)
      assert.equal(server.apiRequests().length, 2)
      await api.close()
    }
  },
  {
    id: "client: a 5xx is retried; a 404 is an ApiError with its status, not retried",
    run: async (driver, server) => {
      server.onApi({ status: 503 }, { status: 404, body: { error: { status: 404, message: "Not found" } } })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, accessToken: "t", maxRetries: 2 }))
      const error = failure(await api.get("/albums/missing"), "ApiError")
      assert.equal(error.status, 404)
      assert.equal(server.apiRequests().length, 2)
      await api.close()
    }
  },
  {
    id: "client: 204 is no body",
    run: async (driver, server) => {
      server.onApi({ status: 204 })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, accessToken: "t" }))
      assert.equal(ok(await api.get("/me/player")), undefined)
      await api.close()
    }
  },
  {
    id: "client: an API error message is cleaned of control and bidi characters",
    run: async (driver, server) => {
      server.onApi({ status: 400, body: { error: { status: 400, message: "bad\u001b[2J input\u202e here" } } })
      const api = ok(await driver.serviceClient({ apiUrl: `${server.url}/v1`, accessToken: "t" }))
      const error = failure(await api.get("/me"), "ApiError")
      assert.match(error.message, /bad/)
      assert.equal(hasControlOrBidi(error.message), false, JSON.stringify(error.message))
      await api.close()
    }
  }
]
