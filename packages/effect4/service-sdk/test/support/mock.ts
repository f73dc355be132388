/** Test fixtures: token responses, and layers of the mock HttpClient with the env-free options tests use. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ClientCredentials, ServiceClient } from "@service-sdk/effect"
import { MockHttpClient, type MockHandler, type MockResponse } from "@service-sdk/effect/testing"

export const CLIENT_ID = "test-client-id"
export const CLIENT_SECRET = "test-client-secret-canary-0123456789"
export const AUTH_URL = "https://accounts.test.example"
export const API_URL = "https://api.test.example/v1"

export const credentials = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, authUrl: AUTH_URL } as const

let counter = 0
/** A token response with a fresh access token each time (`at-1`, `at-2`, ...). */
export const tokenResponse = (extra: Record<string, unknown> = {}, expiresIn = 3600): MockResponse => {
  counter++
  return MockHttpClient.json({ access_token: `at-${counter}`, token_type: "Bearer", expires_in: expiresIn, ...extra })
}

/** A handler that issues a new token for every request. */
export const issuing =
  (extra: Record<string, unknown> = {}, expiresIn = 3600): MockHandler =>
  (_request, call) =>
    MockHttpClient.json({
      access_token: `token-${call + 1}`,
      token_type: "Bearer",
      expires_in: expiresIn,
      ...extra
    })

export const mock = (handler: MockHandler) => MockHttpClient.layer(handler)

/** The requests the mock saw. */
export const requests = Effect.gen(function* () {
  return yield* (yield* MockHttpClient).requests
})

/**
 * A token endpoint that issues `token-N` beside a data API that answers `api(bearer, apiCall)` (0-based calls of the
 * API only).
 */
export const apiServer = (api: (bearer: string, apiCall: number) => ReturnType<MockHandler>): MockHandler => {
  let tokens = 0
  let apiCalls = 0
  return (request) => {
    if (request.url.href.startsWith(AUTH_URL)) {
      tokens++
      return MockHttpClient.json({ access_token: `token-${tokens}`, token_type: "Bearer", expires_in: 3600 })
    }
    return api(request.headers.authorization ?? "", apiCalls++)
  }
}

/** A `ServiceClient` under `API_URL` on its own `ClientCredentials` provider, both on the mock `HttpClient`. */
export const apiClientLayer = (handler: MockHandler, options: ServiceClient.Options = {}) =>
  ServiceClient.layer({ apiUrl: API_URL, ...options }).pipe(
    Layer.provide(ClientCredentials.layer(credentials)),
    Layer.provideMerge(MockHttpClient.layer(handler))
  )

/** The requests the mock saw, to the data API and to the token endpoint. */
export const apiRequests = Effect.map(requests, (all) => all.filter((r) => r.url.href.startsWith(API_URL)))
export const tokenRequests = Effect.map(requests, (all) => all.filter((r) => r.url.href.startsWith(AUTH_URL)))
