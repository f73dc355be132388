/**
 * `@service-sdk/effect/testing`'s `Emulator` on the Effect 4 line (issue 38 item 1): the emulator (the bundle-ready
 * `@service-sdk/emulator`, an Effect 3 app inside) as a layer of this line, with the SDK pointed at it ahead of the
 * environment, its control surface as Effects, and every failure a ConfigurationError.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import { ConfigurationError, ServiceClient } from "@service-sdk/effect"
import { Emulator } from "@service-sdk/effect/testing"

// what a developer's shell may hold for the real Service: the layer's values come first
const realService = ConfigProvider.layer(
  ConfigProvider.fromEnvRecord({
    SERVICE_SDK_AUTH_URL: "https://accounts.service.example",
    SERVICE_SDK_CLIENT_ID: "real-client",
    SERVICE_SDK_CLIENT_SECRET: "real-secret"
  })
)

describe("testing: Emulator.layer", () => {
  it.live("starts the emulator and points ServiceClient.layerClientCredentials() at it, no option given", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const album = yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
      const emulator = yield* Emulator
      const stats = yield* emulator.stats
      assert.strictEqual(album.id, "6akEvsycLGftJxYudPjmqK")
      assert.match(emulator.authUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.strictEqual(emulator.apiUrl, `${emulator.authUrl}/v1`)
      assert.strictEqual(stats.tokenRequests.client_credentials, 1)
      assert.strictEqual(stats.apiRequests.byStatus["200"], 1)
    }).pipe(
      Effect.provide(
        ServiceClient.layerClientCredentials().pipe(
          Layer.provideMerge(Emulator.layer()),
          Layer.provide(FetchHttpClient.layer),
          Layer.provide(realService)
        )
      )
    )
  )

  it.live("its control surface: a fault is served, a bad fault and bad options are ConfigurationErrors", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 60 })
      yield* emulator.injectFault({ target: "api", count: 1, status: 503 })
      const answer = yield* Effect.promise(() => fetch(`${emulator.apiUrl}/albums/6akEvsycLGftJxYudPjmqK`))
      assert.strictEqual(answer.status, 503)
      const badFault = yield* Effect.flip(emulator.injectFault({ target: "nope" } as never))
      assert.instanceOf(badFault, ConfigurationError)
      assert.match(badFault.message, /Invalid fault/)
      const badOptions = yield* Effect.flip(Emulator.make({ port: -1 }))
      assert.instanceOf(badOptions, ConfigurationError)
      const taken = yield* Effect.flip(Emulator.make({ port: emulator.port }))
      assert.strictEqual(taken.message, `Port ${emulator.port} is already in use on 127.0.0.1`)
      const tokens = yield* emulator.signIn({ userId: "alice" })
      assert.isAbove(tokens.refresh_token.length, 0)
    }).pipe(Effect.scoped)
  )

  it.live("stops the emulator when the layer is released", () =>
    Effect.gen(function* () {
      const authUrl = yield* Effect.gen(function* () {
        return (yield* Emulator).authUrl
      }).pipe(Effect.provide(Emulator.layer()))
      const after = yield* Effect.promise(() =>
        fetch(`${authUrl}/__emulator/stats`).then(
          () => "answered",
          () => "closed"
        )
      )
      assert.strictEqual(after, "closed")
    })
  )
})
