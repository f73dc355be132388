import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Emulator, EmulatorError } from "../src/internal/effectApi.js"
import { isLoopbackAddress } from "../src/internal/http.js"
import { ALBUM_ID, api, approve, clientCredentials, request, tokenRequest, userToken } from "./utils.js"

const post = (emulator: Emulator.Service, path: string, body?: unknown) =>
  request(`${emulator.authUrl}/__emulator/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

describe("control API and programmatic control", () => {
  it.scopedLive("GET /__emulator/stats has exactly the documented shape and counts", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const empty = yield* request(`${emulator.authUrl}/__emulator/stats`)
      expect(empty.json).toEqual({
        tokenRequests: { total: 0, client_credentials: 0, authorization_code: 0, refresh_token: 0 },
        apiRequests: { total: 0, byStatus: {}, byPath: {} }
      })
      const user = yield* userToken(emulator, "user-read-private")
      yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: user.refresh_token })
      const token = yield* clientCredentials(emulator)
      yield* tokenRequest(emulator, { grant_type: "nonsense" })
      yield* request(`${emulator.authUrl}/api/token`, { method: "POST", body: "{}" })
      yield* api(emulator, `/albums/${ALBUM_ID}`, token)
      yield* api(emulator, `/albums/${ALBUM_ID}?market=SE`, token)
      yield* api(emulator, "/me", token)
      yield* api(emulator, "/me", undefined)
      yield* api(emulator, "/albums/nope", token)
      const stats = yield* request(`${emulator.authUrl}/__emulator/stats`)
      expect(stats.json).toEqual({
        tokenRequests: { total: 5, client_credentials: 1, authorization_code: 1, refresh_token: 1 },
        apiRequests: {
          total: 5,
          byStatus: { "200": 2, "401": 1, "403": 1, "404": 1 },
          byPath: { [`/v1/albums/${ALBUM_ID}`]: 2, "/v1/me": 2, "/v1/albums/nope": 1 }
        }
      })
      expect(yield* emulator.stats).toEqual(stats.json)
    })
  )

  it.scopedLive("revoke (HTTP and programmatic): access tokens get 401, refresh tokens invalid_grant", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      const revoked = yield* post(emulator, "revoke", { token })
      expect(revoked.json).toEqual({ revoked: true })
      expect((yield* api(emulator, `/albums/${ALBUM_ID}`, token)).json).toEqual({
        error: { status: 401, message: "The access token expired" }
      })
      expect((yield* post(emulator, "revoke", { token })).json).toEqual({ revoked: false })
      expect((yield* post(emulator, "revoke", {})).status).toBe(400)

      const user = yield* userToken(emulator, "user-read-private")
      expect(yield* emulator.revoke(user.refresh_token)).toBe(true)
      const refresh = yield* tokenRequest(emulator, { grant_type: "refresh_token", refresh_token: user.refresh_token })
      expect(refresh.json.error).toBe("invalid_grant")
      // revoking a refresh token also revokes the access tokens of its grant
      expect((yield* api(emulator, "/me", user.access_token)).status).toBe(401)
    })
  )

  it.scopedLive("POST /__emulator/config changes lifetime, rotation and autoApprove at run time", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* post(emulator, "config", { tokenLifetime: 5, rotateRefreshTokens: true, autoApprove: true })
      expect(reply.status).toBe(200)
      expect(reply.json).toMatchObject({ tokenLifetime: 5, rotateRefreshTokens: true, autoApprove: true })
      const token = yield* tokenRequest(emulator, { grant_type: "client_credentials" })
      expect(token.json.expires_in).toBe(5)
      const auto = yield* request(
        `${emulator.authUrl}/authorize?response_type=code&client_id=emulator-client&redirect_uri=${encodeURIComponent("http://127.0.0.1:1/cb")}`
      )
      expect(auto.status).toBe(302)
      const user = yield* userToken(emulator, "")
      const refreshed = yield* tokenRequest(emulator, {
        grant_type: "refresh_token",
        refresh_token: user.refresh_token
      })
      expect(refreshed.json.refresh_token).toBeDefined()
      expect((yield* post(emulator, "config", { tokenLifetime: -1 })).status).toBe(400)
      expect((yield* post(emulator, "config", { bogus: 1 })).status).toBe(400)
      const current = yield* request(`${emulator.authUrl}/__emulator/config`)
      expect(current.json.tokenLifetime).toBe(5)
    })
  )

  it.scopedLive("configure() validates its input", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const error = yield* Effect.flip(emulator.configure({ playback: { trackId: "nope" } }))
      expect(error).toBeInstanceOf(EmulatorError)
      yield* emulator.configure({ tokenLifetime: 7 })
      expect((yield* tokenRequest(emulator, { grant_type: "client_credentials" })).json.expires_in).toBe(7)
    })
  )

  it.scopedLive("reset clears tokens, codes, faults, stats and library changes, and restores start options", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 100 })
      const token = yield* clientCredentials(emulator)
      const code = (yield* approve(emulator)).searchParams.get("code")!
      const user = yield* userToken(emulator, "user-library-read user-library-modify")
      const album = yield* api(emulator, "/playlists/37i9dQZF1DXcBWIGoYBM5M/tracks", user.access_token)
      const unsaved = album.json.items.at(-2).track.id
      yield* api(emulator, `/me/tracks?ids=${unsaved}`, user.access_token, { method: "PUT" })
      yield* emulator.configure({ tokenLifetime: 5 })
      yield* emulator.injectFault({ target: "api", status: 500 })
      const reset = yield* post(emulator, "reset")
      expect(reset.status).toBe(200)
      expect((yield* api(emulator, `/albums/${ALBUM_ID}`, token)).status).toBe(401)
      const exchange = yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code,
        redirect_uri: "http://127.0.0.1:8765/callback"
      })
      expect(exchange.json.error).toBe("invalid_grant")
      const fresh = yield* userToken(emulator, "user-library-read")
      expect(fresh.expires_in).toBe(100)
      const tracks = yield* api(emulator, "/me/tracks", fresh.access_token)
      expect(tracks.status).toBe(200) // the queued fault is gone
      expect(tracks.json.total).toBe(31) // 30 catalogue tracks and the local file
      const stats = yield* emulator.stats
      // after the reset: the 401 album call, the code exchange, the new user token and its library call
      expect(stats.apiRequests).toEqual({
        total: 2,
        byStatus: { "200": 1, "401": 1 },
        byPath: { [`/v1/albums/${ALBUM_ID}`]: 1, "/v1/me/tracks": 1 }
      })
      expect(stats.tokenRequests).toEqual({ total: 2, client_credentials: 0, authorization_code: 2, refresh_token: 0 })
    })
  )

  it.scopedLive("control paths: unknown is 404, wrong method 405", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      expect((yield* request(`${emulator.authUrl}/__emulator/nope`)).status).toBe(404)
      const wrong = yield* request(`${emulator.authUrl}/__emulator/stats`, { method: "POST" })
      expect(wrong.status).toBe(405)
      expect(wrong.headers.get("allow")).toBe("GET")
    })
  )

  it("only loopback peers may use the control API", () => {
    expect(isLoopbackAddress("127.0.0.1")).toBe(true)
    expect(isLoopbackAddress("::1")).toBe(true)
    expect(isLoopbackAddress("::ffff:127.0.0.1")).toBe(true)
    expect(isLoopbackAddress("10.0.0.5")).toBe(false)
    expect(isLoopbackAddress("::ffff:192.168.1.2")).toBe(false)
    expect(isLoopbackAddress(undefined)).toBe(false)
  })

  it.scopedLive("the layer exposes the URLs and stops the server when its scope closes", () =>
    Effect.gen(function* () {
      const authUrl = yield* Effect.gen(function* () {
        const emulator = yield* Emulator
        expect(emulator.authUrl).toBe(`http://127.0.0.1:${emulator.port}`)
        expect(emulator.apiUrl).toBe(`http://127.0.0.1:${emulator.port}/v1`)
        expect(emulator.clientId).toBe("emulator-client")
        expect(emulator.clientSecret).toBe("emulator-secret")
        expect((yield* request(`${emulator.authUrl}/__emulator/stats`)).status).toBe(200)
        return emulator.authUrl
      }).pipe(Effect.provide(Emulator.layer()))
      const after = yield* Effect.either(request(`${authUrl}/__emulator/stats`))
      expect(after._tag).toBe("Left")
    })
  )

  it.scopedLive("a port in use is an EmulatorError that says so; bad options too", () =>
    Effect.gen(function* () {
      const first = yield* Emulator.make()
      const error = yield* Effect.flip(Emulator.make({ port: first.port }))
      expect(error).toBeInstanceOf(EmulatorError)
      expect(error.message).toContain("already in use")
      const host = yield* Effect.flip(Emulator.make({ host: "0.0.0.0" as "127.0.0.1" }))
      expect(host.message).toContain("127.0.0.1")
      const lifetime = yield* Effect.flip(Emulator.make({ tokenLifetime: 1.5 }))
      expect(lifetime._tag).toBe("EmulatorError")
      const layerError = yield* Effect.flip(Layer.launch(Emulator.layer({ port: 70_000 })))
      expect(layerError._tag).toBe("EmulatorError")
    })
  )

  it("Emulator.start: the Promise API, with close() and await using", async () => {
    let authUrl: string
    {
      await using emulator = await Emulator.start({ tokenLifetime: 42 })
      authUrl = emulator.authUrl
      expect(emulator.apiUrl).toBe(`${emulator.authUrl}/v1`)
      expect(emulator.port).toBeGreaterThan(0)
      const response = await fetch(`${emulator.authUrl}/api/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: emulator.clientId,
          client_secret: emulator.clientSecret
        })
      })
      const body = (await response.json()) as { access_token: string; expires_in: number }
      expect(body.expires_in).toBe(42)
      expect((await emulator.stats()).tokenRequests.client_credentials).toBe(1)
      await emulator.injectFault({ target: "api", status: 418 })
      const faulted = await fetch(`${emulator.apiUrl}/albums/${ALBUM_ID}`)
      expect(faulted.status).toBe(418)
      await faulted.text()
      expect(await emulator.revoke(body.access_token)).toBe(true)
      await emulator.configure({ autoApprove: true })
      await expect(emulator.injectFault({ target: "nope" } as never)).rejects.toBeInstanceOf(EmulatorError)
      await emulator.reset()
      expect((await emulator.stats()).apiRequests.total).toBe(0)
    }
    await expect(fetch(`${authUrl}/__emulator/stats`)).rejects.toThrow()
    const second = await Emulator.start()
    await second.close()
    await second.close()
    await expect(Emulator.start({ port: -1 })).rejects.toBeInstanceOf(EmulatorError)
  })
})
