import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Emulator } from "../src/internal/effectApi.js"
import { ALBUM_ID, api, clientCredentials, PLAYLIST_ID, request, userToken } from "./utils.js"

const ALL_SCOPES = [
  "user-read-private",
  "user-read-email",
  "user-library-read",
  "user-library-modify",
  "user-follow-read",
  "user-read-playback-state",
  "playlist-modify-public"
].join(" ")

describe("data API", () => {
  it.scopedLive("GET /albums/{id} with an app token: artists and tracks", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      const reply = yield* api(emulator, `/albums/${ALBUM_ID}`, token)
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
      expect(reply.json.id).toBe(ALBUM_ID)
      expect(typeof reply.json.name).toBe("string")
      expect(reply.json.artists.length).toBeGreaterThan(0)
      expect(reply.json.artists[0]).toMatchObject({ id: expect.any(String), name: expect.any(String) })
      expect(reply.json.tracks.items.length).toBeGreaterThanOrEqual(8)
      expect(reply.json.tracks.items[0]).toMatchObject({ id: expect.any(String), name: expect.any(String) })
      expect(reply.json.href).toBe(`${emulator.apiUrl}/albums/${ALBUM_ID}`)
    })
  )

  it.scopedLive("unknown album and playlist are 404 with the Service's error body; unknown paths too", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      const album = yield* api(emulator, "/albums/doesNotExist", token)
      expect(album.status).toBe(404)
      expect(album.json).toEqual({ error: { status: 404, message: expect.any(String) } })
      const playlist = yield* api(emulator, "/playlists/nope", token)
      expect(playlist.status).toBe(404)
      expect(playlist.json.error.status).toBe(404)
      const path = yield* api(emulator, "/nothing/here", token)
      expect(path.status).toBe(404)
      expect(path.json.error.status).toBe(404)
    })
  )

  it.scopedLive("401: no token, unknown token, non-bearer scheme", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const none = yield* api(emulator, `/albums/${ALBUM_ID}`, undefined)
      expect(none.status).toBe(401)
      expect(none.json).toEqual({ error: { status: 401, message: "No token provided" } })
      const unknown = yield* api(emulator, `/albums/${ALBUM_ID}`, "made-up-token")
      expect(unknown.status).toBe(401)
      expect(unknown.json).toEqual({ error: { status: 401, message: "The access token expired" } })
      expect(unknown.headers.get("www-authenticate")).toContain("invalid_token")
      const basicScheme = yield* request(`${emulator.apiUrl}/albums/${ALBUM_ID}`, {
        headers: { authorization: "Basic abc" }
      })
      expect(basicScheme.status).toBe(400)
    })
  )

  it.scoped("401 once the token has expired (TestClock)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ tokenLifetime: 60 })
      const token = yield* clientCredentials(emulator)
      yield* TestClock.adjust("59 seconds")
      expect((yield* api(emulator, `/albums/${ALBUM_ID}`, token)).status).toBe(200)
      yield* TestClock.adjust("1 second")
      const expired = yield* api(emulator, `/albums/${ALBUM_ID}`, token)
      expect(expired.status).toBe(401)
      expect(expired.json).toEqual({ error: { status: 401, message: "The access token expired" } })
    })
  )

  it.scopedLive("403 for an app token on user endpoints", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator, ALL_SCOPES)
      for (const path of ["/me", "/me/tracks", "/me/following?type=artist", "/me/player"]) {
        const reply = yield* api(emulator, path, token)
        expect(reply.status, path).toBe(403)
        expect(reply.json.error.status).toBe(403)
        expect(typeof reply.json.error.message).toBe("string")
      }
    })
  )

  it.scopedLive("403 for a user token without the endpoint's scope", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "user-read-private")
      const cases: ReadonlyArray<readonly [string, RequestInit]> = [
        ["/me/tracks", {}],
        ["/me/tracks?ids=x", { method: "PUT" }],
        ["/me/following?type=artist", {}],
        ["/me/player", {}],
        [
          `/playlists/${PLAYLIST_ID}/items`,
          {
            method: "POST",
            body: JSON.stringify({ uris: ["service:track:abc"] }),
            headers: { "content-type": "application/json" }
          }
        ]
      ]
      for (const [path, init] of cases) {
        const reply = yield* api(emulator, path, access_token, init)
        expect(reply.status, path).toBe(403)
        expect(reply.json.error.message).toMatch(/scope/i)
      }
    })
  )

  it.scopedLive("GET /me: email only with user-read-email; country and product with user-read-private", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const full = yield* userToken(emulator, "user-read-private user-read-email")
      const me = yield* api(emulator, "/me", full.access_token)
      expect(me.status).toBe(200)
      expect(me.json).toMatchObject({
        id: "emulator-user",
        display_name: expect.any(String),
        email: expect.stringContaining("@"),
        country: expect.any(String),
        product: expect.any(String)
      })
      const privateOnly = yield* userToken(emulator, "user-read-private")
      const noEmail = yield* api(emulator, "/me", privateOnly.access_token)
      expect(noEmail.json.id).toBe("emulator-user")
      expect(noEmail.json).not.toHaveProperty("email")
      expect(noEmail.json.country).toBeDefined()
    })
  )

  it.scopedLive("GET /me/tracks pages with limit, offset, total and a full next URL", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "user-library-read")
      const first = yield* api(emulator, "/me/tracks?limit=20", access_token)
      expect(first.status).toBe(200)
      // 30 catalogue tracks and one local file
      expect(first.json).toMatchObject({ limit: 20, offset: 0, total: 31 })
      expect(first.json.items).toHaveLength(20)
      expect(first.json.items[0]).toMatchObject({ added_at: expect.any(String), track: { id: expect.any(String) } })
      expect(first.json.next).toBe(`${emulator.apiUrl}/me/tracks?offset=20&limit=20`)
      const second = yield* request(first.json.next, { headers: { authorization: `Bearer ${access_token}` } })
      expect(second.json.items).toHaveLength(11)
      expect(second.json.next).toBeNull()
      const ids = new Set([...first.json.items, ...second.json.items].map((item: any) => item.track.id))
      expect(ids.size).toBe(31)
      const defaults = yield* api(emulator, "/me/tracks", access_token)
      expect(defaults.json).toMatchObject({ limit: 20, offset: 0 })
    })
  )

  it.scopedLive("limit outside 1..50 (or not a number) is 400", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "user-library-read user-follow-read")
      for (const path of [
        "/me/tracks?limit=0",
        "/me/tracks?limit=51",
        "/me/tracks?limit=ten",
        "/me/tracks?offset=-1",
        "/me/following?type=artist&limit=51"
      ]) {
        const reply = yield* api(emulator, path, access_token)
        expect(reply.status, path).toBe(400)
        expect(reply.json.error.status).toBe(400)
      }
      expect((yield* api(emulator, "/me/tracks?limit=50", access_token)).status).toBe(200)
      expect((yield* api(emulator, "/me/tracks?limit=1", access_token)).status).toBe(200)
    })
  )

  it.scopedLive("PUT /me/tracks?ids=a,b saves them (200) and they appear first", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "user-library-read user-library-modify")
      const album = yield* api(emulator, "/albums/6akEvsycLGftJxYudPjmqK", access_token)
      // the last catalogue tracks are not saved at start
      const all = yield* api(emulator, "/me/tracks?limit=50", access_token)
      const saved = new Set(all.json.items.map((item: any) => item.track.id))
      expect(saved.size).toBe(31) // 30 catalogue ids and the local file's null
      const candidates: Array<string> = album.json.tracks.items.map((track: any) => track.id)
      expect(candidates.every((id) => saved.has(id))).toBe(true)
      const playlist = yield* api(emulator, `/playlists/${PLAYLIST_ID}/tracks?limit=100`, access_token)
      const unsaved: Array<string> = playlist.json.items
        .map((item: any) => item.track.id)
        .filter((id: string) => !saved.has(id))
      expect(unsaved.length).toBeGreaterThanOrEqual(1)
      const put = yield* api(emulator, `/me/tracks?ids=${unsaved.join(",")}`, access_token, { method: "PUT" })
      expect(put.status).toBe(200)
      const after = yield* api(emulator, "/me/tracks?limit=50", access_token)
      expect(after.json.total).toBe(31 + unsaved.length)
      expect(after.json.items[0].track.id).toBe(unsaved.at(-1))
      const missing = yield* api(emulator, "/me/tracks", access_token, { method: "PUT" })
      expect(missing.status).toBe(400)
      const invalid = yield* api(emulator, "/me/tracks?ids=notATrack", access_token, { method: "PUT" })
      expect(invalid.status).toBe(400)
    })
  )

  it.scopedLive("GET /me/following?type=artist pages with cursors.after and total", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "user-follow-read")
      const seen: Array<string> = []
      let path: string | null = "/me/following?type=artist&limit=5"
      let pages = 0
      let total = 0
      while (path !== null && pages < 10) {
        const reply: any = yield* api(emulator, path, access_token)
        expect(reply.status).toBe(200)
        total = reply.json.artists.total
        seen.push(...reply.json.artists.items.map((artist: any) => artist.id))
        const after = reply.json.artists.cursors.after
        if (after === null) {
          expect(reply.json.artists.next).toBeNull()
          path = null
        } else {
          expect(after).toBe(reply.json.artists.items.at(-1).id)
          expect(reply.json.artists.next).toContain(`after=${after}`)
          path = `/me/following?type=artist&limit=5&after=${after}`
        }
        pages++
      }
      expect(total).toBeGreaterThan(5)
      expect(seen).toHaveLength(total)
      expect(new Set(seen).size).toBe(total)
      expect(pages).toBe(Math.ceil(total / 5))
      const noType = yield* api(emulator, "/me/following", access_token)
      expect(noType.status).toBe(400)
    })
  )

  it.scopedLive("GET /me/player is 204 when nothing plays; configure({ playback }) sets a state", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "user-read-playback-state")
      const idle = yield* api(emulator, "/me/player", access_token)
      expect(idle.status).toBe(204)
      expect(idle.text).toBe("")
      const album = yield* api(emulator, `/albums/${ALBUM_ID}`, access_token)
      const trackId = album.json.tracks.items[2].id
      yield* emulator.configure({ playback: { trackId, progressMs: 1234 } })
      const playing = yield* api(emulator, "/me/player", access_token)
      expect(playing.status).toBe(200)
      expect(playing.json).toMatchObject({ is_playing: true, progress_ms: 1234, item: { id: trackId } })
      yield* emulator.configure({ playback: null })
      expect((yield* api(emulator, "/me/player", access_token)).status).toBe(204)
    })
  )

  it.scopedLive("POST /playlists/{id}/items → 201 {snapshot_id} and the items are added", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { access_token } = yield* userToken(emulator, "playlist-modify-private")
      const before = yield* api(emulator, `/playlists/${PLAYLIST_ID}`, access_token)
      expect(before.status).toBe(200)
      const uris = ["service:track:4iV5W9uYEdYUVa79Axb7Rh", "spotify:track:1301WleyT98MSxVHPZCA6M"]
      const reply = yield* api(emulator, `/playlists/${PLAYLIST_ID}/items`, access_token, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uris })
      })
      expect(reply.status).toBe(201)
      expect(reply.json).toEqual({ snapshot_id: expect.any(String) })
      expect(reply.json.snapshot_id).not.toBe(before.json.snapshot_id)
      const after = yield* api(emulator, `/playlists/${PLAYLIST_ID}/items`, access_token)
      expect(after.json.total).toBe(before.json.tracks.total + 2)
      expect(after.json.items.slice(-2).map((item: any) => item.track.uri)).toEqual(uris)
      const bad = yield* api(emulator, `/playlists/${PLAYLIST_ID}/items`, access_token, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json"
      })
      expect(bad.status).toBe(400)
      const empty = yield* api(emulator, `/playlists/${PLAYLIST_ID}/items`, access_token, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uris: [] })
      })
      expect(empty.status).toBe(400)
      const unknown = yield* api(emulator, "/playlists/nope/items", access_token, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uris })
      })
      expect(unknown.status).toBe(404)
    })
  )

  it.scopedLive(
    "POST /playlists/{id}/tracks (removed for development-mode apps in 2026) → 403 with the Service's message",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make()
        const { access_token } = yield* userToken(emulator, "playlist-modify-public")
        const before = yield* api(emulator, `/playlists/${PLAYLIST_ID}`, access_token)
        const reply = yield* api(emulator, `/playlists/${PLAYLIST_ID}/tracks`, access_token, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ uris: ["service:track:4iV5W9uYEdYUVa79Axb7Rh"] })
        })
        expect(reply.status).toBe(403)
        expect(reply.json).toEqual({ error: { status: 403, message: expect.stringContaining("/items") } })
        const after = yield* api(emulator, `/playlists/${PLAYLIST_ID}`, access_token)
        expect(after.json.snapshot_id).toBe(before.json.snapshot_id)
        expect(after.json.tracks.total).toBe(before.json.tracks.total)
      })
  )

  it.scopedLive(
    "a local file is in the library (third) and can play: null ids, is_local, as the Service sends it",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make({ playback: { trackId: Emulator.localFileTrackId, progressMs: 5 } })
        const { access_token } = yield* userToken(emulator, "user-library-read user-read-playback-state")
        const page = yield* api(emulator, "/me/tracks?limit=5", access_token)
        const local = page.json.items[2].track
        expect(local).toMatchObject({ id: null, is_local: true, href: null })
        expect(local.album).toMatchObject({ id: null, uri: null, release_date: null })
        expect(local.artists).toEqual([expect.objectContaining({ id: null, uri: null })])
        const player = yield* api(emulator, "/me/player", access_token)
        expect(player.status).toBe(200)
        expect(player.json).toMatchObject({ is_playing: true, progress_ms: 5, item: { id: null, is_local: true } })
      })
  )

  it.scopedLive("wrong method on a data API path is 405 with Allow", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const token = yield* clientCredentials(emulator)
      const reply = yield* api(emulator, `/albums/${ALBUM_ID}`, token, { method: "DELETE" })
      expect(reply.status).toBe(405)
      expect(reply.headers.get("allow")).toBe("GET")
      expect(reply.json.error.status).toBe(405)
    })
  )
})
