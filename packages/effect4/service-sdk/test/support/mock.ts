/** Test fixtures: token responses, and layers of the mock HttpClient with the env-free options tests use. */
import * as Effect from "effect/Effect"
import { MockHttpClient, type MockHandler, type MockResponse } from "service-sdk/testing"

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
