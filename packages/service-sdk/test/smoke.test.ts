import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { ClientCredentials, TokenProvider } from "service-sdk"
import { MockHttpClient } from "service-sdk/testing"

describe("smoke", () => {
  it.effect("client credentials fetches once and caches", () =>
    Effect.gen(function* () {
      const provider = yield* TokenProvider
      const token = yield* provider.getAccessToken
      yield* provider.getAccessToken
      const requests = yield* (yield* MockHttpClient).requests
      expect(Redacted.value(token)).toBe("tok-1")
      expect(requests).toHaveLength(1)
      expect(requests[0]!.form.get("grant_type")).toBe("client_credentials")
    }).pipe(
      Effect.provide(
        ClientCredentials.layer({ clientId: "id", clientSecret: "secret" }).pipe(
          Layer.provideMerge(MockHttpClient.layer(() => MockHttpClient.json({ access_token: "tok-1", expires_in: 3600, token_type: "Bearer" })))
        )
      )
    ))
})
