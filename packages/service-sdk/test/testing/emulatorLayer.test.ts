/**
 * `@service-sdk/effect/testing`'s `Emulator` (issue 38 item 1): the emulator as a layer of this line, with the SDK
 * pointed at it (the SDK's `SERVICE_SDK_*` names read from the emulator ahead of the environment), its control
 * surface as Effects, and every failure a ConfigurationError.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ConfigurationError, ServiceClient } from "@service-sdk/effect"
import { Emulator } from "@service-sdk/effect/testing"

// what a developer's shell may hold for the real Service: the layer's values come first
const realService = Layer.setConfigProvider(
  ConfigProvider.fromMap(
    new Map([
      ["SERVICE_SDK_AUTH_URL", "https://accounts.service.example"],
      ["SERVICE_SDK_CLIENT_ID", "real-client"],
      ["SERVICE_SDK_CLIENT_SECRET", "real-secret"]
    ])
  )
)

describe("testing: Emulator.layer", () => {
  it.scopedLive("starts the emulator and points ServiceClient.layerClientCredentials() at it, no option given", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const album = yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
      const emulator = yield* Emulator
      const stats = yield* emulator.stats
      expect(album.id).toBe("6akEvsycLGftJxYudPjmqK")
      expect(emulator.authUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(emulator.apiUrl).toBe(`${emulator.authUrl}/v1`)
      expect(stats.tokenRequests.client_credentials).toBe(1)
      expect(stats.apiRequests.byStatus["200"]).toBe(1)
    }).pipe(
      Effect.provide(
        ServiceClient.layerClientCredentials().pipe(
          Layer.provideMerge(Emulator.layer()),
          Layer.provide(NodeHttpClient.layerUndici),
          Layer.provide(realService)
        )
      )
    )
  )

  it.scopedLive("its control surface: a fault is served, a bad fault and bad options are ConfigurationErrors", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 60 })
      yield* emulator.injectFault({ target: "api", count: 1, status: 503 })
      const answer = yield* Effect.promise(() => fetch(`${emulator.apiUrl}/albums/6akEvsycLGftJxYudPjmqK`))
      expect(answer.status).toBe(503)
      const badFault = yield* Effect.flip(emulator.injectFault({ target: "nope" } as never))
      expect(badFault).toBeInstanceOf(ConfigurationError)
      expect(badFault.message).toMatch(/Invalid fault/)
      const badOptions = yield* Effect.flip(Emulator.make({ port: -1 }))
      expect(badOptions).toBeInstanceOf(ConfigurationError)
      expect(badOptions.message).toMatch(/port/)
      const taken = yield* Effect.flip(Emulator.make({ port: emulator.port }))
      expect(taken.message).toBe(`Port ${emulator.port} is already in use on 127.0.0.1`)
      const tokens = yield* emulator.signIn({ userId: "alice" })
      expect(tokens.refresh_token.length).toBeGreaterThan(0)
    })
  )

  it.live("stops the emulator when the layer is released", () =>
    Effect.gen(function* () {
      const authUrl = yield* Effect.map(Emulator, (emulator) => emulator.authUrl).pipe(Effect.provide(Emulator.layer()))
      const after = yield* Effect.promise(() =>
        fetch(`${authUrl}/__emulator/stats`).then(
          () => "answered",
          () => "closed"
        )
      )
      expect(after).toBe("closed")
    })
  )
})
