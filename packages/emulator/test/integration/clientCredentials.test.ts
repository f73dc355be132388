import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { ApiError, ClientCredentials, ServiceClient, TokenProvider } from "@service-sdk/effect"
import { Emulator } from "../../src/internal/effectApi.js"
import { api } from "../utils.js"
import { ALBUM_ID, HttpLive, statsSince } from "./harness.js"

const clientCredentials = (emulator: Emulator.Service) =>
  ClientCredentials.make({
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    authUrl: emulator.authUrl
  })

describe("client credentials against the emulator", () => {
  it.scopedLive("fetches an app token once, and the API accepts it for albums.get", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const since = yield* statsSince(emulator)
      const provider = yield* clientCredentials(emulator)
      const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
        Effect.provideService(TokenProvider, provider)
      )

      const album = yield* client.albums.get(ALBUM_ID)
      expect(album.id).toBe(ALBUM_ID)
      expect(album.name.length).toBeGreaterThan(0)
      expect(album.artists.length).toBeGreaterThan(0)
      expect(album.tracks.items.length).toBeGreaterThan(0)

      // the same token again, from the cache
      const token = yield* provider.getAccessToken
      expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(token))
      yield* client.albums.get(ALBUM_ID)

      const seen = yield* since
      expect(seen).toMatchObject({ token: 1, client_credentials: 1, api: 2, apiByStatus: { "200": 2 } })
      // and it is a real token of the emulator's
      const direct = yield* Effect.orDie(api(emulator, `/albums/${ALBUM_ID}`, Redacted.value(token)))
      expect(direct.status).toBe(200)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("an app token on /me is ApiError 403, with no token refresh", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const since = yield* statsSince(emulator)
      const provider = yield* clientCredentials(emulator)
      const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
        Effect.provideService(TokenProvider, provider)
      )
      const error = yield* Effect.flip(client.users.me)
      expect(error).toBeInstanceOf(ApiError)
      expect(error._tag).toBe("ApiError")
      expect((error as ApiError).status).toBe(403)
      expect((error as ApiError).payload).toMatchObject({ error: { status: 403 } })
      const seen = yield* since
      // 403 is final: no retry and no token refresh (only 401 forces one)
      expect(seen).toMatchObject({ token: 1, api: 1, apiByStatus: { "403": 1 } })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("ServiceClient.layerClientCredentials wires its own provider to the emulator", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const since = yield* statsSince(emulator)
      const album = yield* Effect.flatMap(ServiceClient, (client) => client.albums.get(ALBUM_ID)).pipe(
        Effect.provide(
          ServiceClient.layerClientCredentials({
            clientId: emulator.clientId,
            clientSecret: emulator.clientSecret,
            authUrl: emulator.authUrl,
            apiUrl: emulator.apiUrl
          })
        )
      )
      expect(album.id).toBe(ALBUM_ID)
      expect(yield* since).toMatchObject({ client_credentials: 1, api: 1 })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a revoked app token: one 401, one new client_credentials token, and the call succeeds", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const provider = yield* clientCredentials(emulator)
      const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
        Effect.provideService(TokenProvider, provider)
      )
      const revoked = Redacted.value(yield* provider.getAccessToken)
      expect(yield* emulator.revoke(revoked)).toBe(true)
      const since = yield* statsSince(emulator)
      expect((yield* client.albums.get(ALBUM_ID)).id).toBe(ALBUM_ID)
      expect(yield* since).toMatchObject({
        token: 1,
        client_credentials: 1,
        api: 2,
        apiByStatus: { "401": 1, "200": 1 }
      })
      expect(Redacted.value(yield* provider.getAccessToken)).not.toBe(revoked)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("layerAccessToken: a revoked fixed token is AuthenticationError 401, with no token request", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = Redacted.value(yield* Effect.flatMap(clientCredentials(emulator), (p) => p.getAccessToken))
      const albums = Effect.flatMap(ServiceClient, (client) => client.albums.get(ALBUM_ID)).pipe(
        Effect.provide(ServiceClient.layerAccessToken(token, { apiUrl: emulator.apiUrl }))
      )
      expect((yield* albums).id).toBe(ALBUM_ID)
      yield* emulator.revoke(token)
      const since = yield* statsSince(emulator)
      const error = yield* Effect.flip(albums)
      expect(error._tag).toBe("AuthenticationError")
      expect(error).toMatchObject({ status: 401, payload: { error: "invalid_token" } })
      expect(error.message).toMatch(/cannot be refreshed/)
      expect(yield* since).toMatchObject({ token: 0, api: 1, apiByStatus: { "401": 1 } })
    }).pipe(Effect.provide(HttpLive))
  )
})
