import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ServiceClient } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { requestCount, requests } from "../fixtures.js"
import { API_URL, clientLayer, ok, settle, status } from "../ServiceClient.helpers.js"

const artist = (id: string) => ({ id, name: `Artist ${id}`, type: "artist", uri: `service:artist:${id}`, href: "h" })

const albumBody = {
  id: "6akEvsycLGftJxYudPjmqK",
  name: "Emulated Album",
  album_type: "album",
  release_date: "2020-01-31",
  artists: [artist("a1")],
  popularity: 60,
  tracks: {
    href: "h",
    items: [
      { id: "t1", name: "One", duration_ms: 1000, track_number: 1, explicit: false, artists: [artist("a1")] },
      { id: "t2", name: "Two", duration_ms: 2000, track_number: 2 }
    ],
    limit: 50,
    offset: 0,
    next: null,
    total: 2
  }
}

const track = {
  id: "t1",
  name: "One",
  duration_ms: 1000,
  artists: [artist("a1")],
  album: { id: "al", name: "Album", release_date: "2020", artists: [] },
  popularity: 50
}

const lastRequest = Effect.map(requests, (all) => all[all.length - 1]!)

describe("ServiceClient resources", () => {
  it.effect("users.me: GET /me, decoded, unknown fields dropped", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const user = yield* client.users.me
      expect(user).toStrictEqual({
        id: "emulator-user",
        display_name: "Emulator User",
        email: "user@example.invalid",
        country: "SE",
        product: "premium"
      })
      const request = yield* lastRequest
      expect(request.method).toBe("GET")
      expect(request.url.href).toBe(`${API_URL}/me`)
    }).pipe(
      Effect.provide(
        clientLayer(() =>
          ok({
            id: "emulator-user",
            display_name: "Emulator User",
            email: "user@example.invalid",
            country: "SE",
            product: "premium",
            followers: { total: 3 },
            images: []
          })
        )
      )
    )
  )

  it.effect("users.me: optional fields may be absent or null; a missing id is an ApiError naming it", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      expect(yield* client.users.me).toStrictEqual({ id: "u", display_name: null })
      const error = yield* Effect.flip(client.users.me)
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(200)
      expect(error.message).toBe("unexpected answer to GET /me (200): id is missing")
    }).pipe(
      Effect.provide(
        clientLayer(MockHttpClient.script(ok({ id: "u", display_name: null, email: null }), ok({ display_name: "x" })))
      )
    )
  )

  it.effect("albums.get: GET /albums/{id} with the id URL-encoded; artists and track items decoded", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const album = yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
      expect(album.name).toBe("Emulated Album")
      expect(album.release_date).toBe("2020-01-31")
      expect(album.artists).toStrictEqual([{ id: "a1", name: "Artist a1", uri: "service:artist:a1" }])
      expect(album.tracks.items.map((item) => [item.id, item.duration_ms, item.track_number])).toEqual([
        ["t1", 1000, 1],
        ["t2", 2000, 2]
      ])
      expect("explicit" in album.tracks.items[0]!).toBe(false)
      expect((yield* lastRequest).url.pathname).toBe("/v1/albums/6akEvsycLGftJxYudPjmqK")
      yield* client.albums.get("a/b c?d")
      expect((yield* lastRequest).url.href).toBe(`${API_URL}/albums/a%2Fb%20c%3Fd`)
    }).pipe(Effect.provide(clientLayer(() => ok(albumBody))))
  )

  it.effect("albums.get: an album whose track items lack duration_ms is an ApiError naming the field", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.albums.get("x"))
      expect(error._tag).toBe("ApiError")
      expect(error.message).toContain("tracks.items.1.duration_ms is missing")
    }).pipe(
      Effect.provide(
        clientLayer(() =>
          ok({ ...albumBody, tracks: { items: [albumBody.tracks.items[0], { id: "t2", name: "Two" }] } })
        )
      )
    )
  )

  it.effect("albums.get: 404 is an ApiError with the API's message", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.albums.get("nope"))
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(404)
      expect(error.message).toContain("status 404")
    }).pipe(Effect.provide(clientLayer(() => status(404))))
  )

  it.effect("library.savedTracks: GET /me/tracks with limit and offset; a paging object", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const page = yield* client.library.savedTracks({ limit: 2, offset: 4 })
      expect((yield* lastRequest).url.href).toBe(`${API_URL}/me/tracks?limit=2&offset=4`)
      expect(page.total).toBe(9)
      expect(page.limit).toBe(2)
      expect(page.offset).toBe(4)
      expect(page.next).toBe(`${API_URL}/me/tracks?offset=6&limit=2`)
      expect(page.items[0]!.added_at).toBe("2024-05-01T10:00:00Z")
      expect(page.items[0]!.track.album).toStrictEqual({ id: "al", name: "Album", release_date: "2020" })
      yield* client.library.savedTracks()
      expect((yield* lastRequest).url.href).toBe(`${API_URL}/me/tracks`)
    }).pipe(
      Effect.provide(
        clientLayer(() =>
          ok({
            href: "h",
            items: [{ added_at: "2024-05-01T10:00:00Z", track }],
            total: 9,
            limit: 2,
            offset: 4,
            next: `${API_URL}/me/tracks?offset=6&limit=2`,
            previous: null
          })
        )
      )
    )
  )

  it.effect("library.savedTracks: the last page has next null", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const page = yield* client.library.savedTracks({ limit: 50 })
      expect(page.next).toBeNull()
      expect(page.items).toEqual([])
    }).pipe(Effect.provide(clientLayer(() => ok({ items: [], total: 0, limit: 50, offset: 0, next: null }))))
  )

  it.effect("library.saveTracks: PUT /me/tracks?ids=a,b; an empty list sends nothing", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      expect(yield* client.library.saveTracks(["a", "b"])).toBeUndefined()
      const request = yield* lastRequest
      expect(request.method).toBe("PUT")
      expect(request.url.pathname).toBe("/v1/me/tracks")
      expect(request.url.searchParams.get("ids")).toBe("a,b")
      yield* client.library.saveTracks([])
      expect(yield* requestCount).toBe(1)
    }).pipe(Effect.provide(clientLayer(() => ({ status: 200 }))))
  )

  it.effect("library.saveTracks: a 403 (missing scope) is an ApiError", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.library.saveTracks(["a"]))
      expect(error._tag).toBe("ApiError")
      if (error._tag !== "ApiError") return
      expect(error.status).toBe(403)
      expect(error.message).toContain("Insufficient client scope")
    }).pipe(
      Effect.provide(
        clientLayer(() => MockHttpClient.json({ error: { status: 403, message: "Insufficient client scope" } }, 403))
      )
    )
  )

  it.effect("follows.followedArtists: GET /me/following?type=artist with limit and after; cursors decoded", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const page = yield* client.follows.followedArtists({ limit: 1, after: "a1" })
      const url = (yield* lastRequest).url
      expect(url.pathname).toBe("/v1/me/following")
      expect([...url.searchParams]).toEqual([
        ["type", "artist"],
        ["limit", "1"],
        ["after", "a1"]
      ])
      expect(page.artists.total).toBe(3)
      expect(page.artists.cursors.after).toBe("a2")
      expect(page.artists.items[0]).toStrictEqual({
        id: "a2",
        name: "Artist a2",
        uri: "service:artist:a2",
        genres: ["synth"],
        followers: { total: 10 },
        popularity: 5
      })
      yield* client.follows.followedArtists()
      expect((yield* lastRequest).url.search).toBe("?type=artist")
    }).pipe(
      Effect.provide(
        clientLayer(() =>
          ok({
            artists: {
              items: [{ ...artist("a2"), genres: ["synth"], followers: { href: null, total: 10 }, popularity: 5 }],
              cursors: { after: "a2" },
              total: 3,
              limit: 1,
              next: "n",
              href: "h"
            }
          })
        )
      )
    )
  )

  it.effect("follows.followedArtists: the last page's cursors.after is absent (null)", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const page = yield* client.follows.followedArtists()
      expect(page.artists.cursors.after).toBeUndefined()
    }).pipe(
      Effect.provide(
        clientLayer(() => ok({ artists: { items: [], cursors: { after: null }, total: 0, limit: 20, next: null } }))
      )
    )
  )

  it.effect("player.playbackState: some state on 200, none on 204", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const playing = yield* client.player.playbackState
      expect(Option.isSome(playing)).toBe(true)
      if (Option.isNone(playing)) return
      expect(playing.value.is_playing).toBe(true)
      expect(playing.value.progress_ms).toBe(1234)
      expect(playing.value.item?.id).toBe("t1")
      expect(playing.value.device).toStrictEqual({ id: "d1", name: "Laptop", type: "Computer", is_active: true })
      expect((yield* lastRequest).url.href).toBe(`${API_URL}/me/player`)
      expect(yield* client.player.playbackState).toEqual(Option.none())
      expect(yield* requestCount).toBe(2)
    }).pipe(
      Effect.provide(
        clientLayer(
          MockHttpClient.script(
            ok({
              is_playing: true,
              progress_ms: 1234,
              item: track,
              device: { id: "d1", name: "Laptop", type: "Computer", is_active: true, volume_percent: null },
              context: null
            }),
            { status: 204 }
          )
        )
      )
    )
  )

  it.effect("player.playbackState: a state without is_playing is an ApiError", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.player.playbackState)
      expect(error._tag).toBe("ApiError")
      expect(error.message).toContain("is_playing")
    }).pipe(Effect.provide(clientLayer(() => ok({ progress_ms: 1 }))))
  )

  it.effect(
    "playlists.addItems: POST /playlists/{id}/items with {uris} (not the removed /tracks); returns the snapshot id",
    () =>
      Effect.gen(function* () {
        const client = yield* ServiceClient
        const result = yield* client.playlists.addItems("37i9dQZF1DXcBWIGoYBM5M", [
          "service:track:t1",
          "service:track:t2"
        ])
        expect(result).toStrictEqual({ snapshot_id: "snap-2" })
        const request = yield* lastRequest
        expect(request.method).toBe("POST")
        expect(request.url.href).toBe(`${API_URL}/playlists/37i9dQZF1DXcBWIGoYBM5M/items`)
        expect(request.headers["content-type"]).toBe("application/json")
        expect(JSON.parse(request.body)).toEqual({ uris: ["service:track:t1", "service:track:t2"] })
      }).pipe(Effect.provide(clientLayer(() => MockHttpClient.json({ snapshot_id: "snap-2", extra: 1 }, 201))))
  )

  it.effect("playlists.addItems: a 500 is not retried (adding twice would add twice)", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const exit = yield* settle(client.playlists.addItems("p", ["u"]))
      expect(exit._tag).toBe("Failure")
      expect(yield* requestCount).toBe(1)
    }).pipe(Effect.provide(clientLayer(() => status(500))))
  )
})
