/** The typed resources (DESIGN section 5): paths, queries, bodies, and decoding what the real API sends. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServiceClient } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient, TestTokenProvider } from "@service-sdk/effect/testing"
import { API_URL, requests } from "../support/mock.js"

const client = (handler: MockHandler) =>
  ServiceClient.layer({ apiUrl: API_URL }).pipe(
    Layer.provide(TestTokenProvider.layer("t")),
    Layer.provideMerge(MockHttpClient.layer(handler))
  )

const localTrack = {
  added_at: "2026-01-01T00:00:00Z",
  track: {
    id: null,
    name: "Local file",
    is_local: true,
    duration_ms: 1000,
    artists: [{ id: null, name: "Someone" }],
    album: { id: null, name: "Unknown" }
  }
}

describe("typed resources", () => {
  it.effect("library.savedTracks: GET /me/tracks with limit/offset; local files decode with null ids", () =>
    Effect.gen(function* () {
      const service = yield* ServiceClient
      const page = yield* service.library.savedTracks({ limit: 5, offset: 10 })
      assert.strictEqual(page.items[0]!.track.id, null)
      assert.strictEqual(page.items[0]!.track.album!.id, null)
      const [request] = yield* requests
      assert.strictEqual(request!.url.pathname, "/v1/me/tracks")
      assert.strictEqual(request!.url.search, "?limit=5&offset=10")
    }).pipe(
      Effect.provide(
        client(() => MockHttpClient.json({ items: [localTrack], total: 1, limit: 5, offset: 10, next: null }))
      )
    )
  )

  it.effect("library.saveTracks: PUT /me/tracks?ids=a,b; nothing to save is no request", () =>
    Effect.gen(function* () {
      const service = yield* ServiceClient
      yield* service.library.saveTracks([])
      assert.strictEqual((yield* requests).length, 0)
      yield* service.library.saveTracks(["a", "b"])
      const [request] = yield* requests
      assert.strictEqual(request!.method, "PUT")
      assert.strictEqual(request!.url.searchParams.get("ids"), "a,b")
    }).pipe(Effect.provide(client(() => ({ status: 200 }))))
  )

  it.effect("follows.followedArtists: type=artist and the cursor", () =>
    Effect.gen(function* () {
      const service = yield* ServiceClient
      const result = yield* service.follows.followedArtists({ limit: 2, after: "x" })
      assert.strictEqual(result.artists.items[0]!.name, "A")
      const [request] = yield* requests
      assert.deepStrictEqual(Object.fromEntries(request!.url.searchParams), { type: "artist", limit: "2", after: "x" })
    }).pipe(
      Effect.provide(
        client(() =>
          MockHttpClient.json({ artists: { items: [{ id: "1", name: "A" }], cursors: { after: null }, total: 1 } })
        )
      )
    )
  )

  it.effect("player.playbackState: an episode without artists or album; an empty 200 is none", () =>
    Effect.gen(function* () {
      const service = yield* ServiceClient
      const state = yield* service.player.playbackState
      assert.isTrue(Option.isSome(state) && state.value.item!.artists === undefined)
      const control = yield* MockHttpClient
      yield* control.setHandler(() => ({ status: 200, body: "" }))
      assert.isTrue(Option.isNone(yield* service.player.playbackState))
    }).pipe(
      Effect.provide(
        client(() => MockHttpClient.json({ is_playing: true, item: { id: "e1", name: "Episode", type: "episode" } }))
      )
    )
  )

  it.effect("playlists.addItems: POST /playlists/{id}/items with the uris; an unexpected body is ApiError", () =>
    Effect.gen(function* () {
      const service = yield* ServiceClient
      const snapshot = yield* service.playlists.addItems("p/1", ["spotify:track:1"])
      assert.strictEqual(snapshot.snapshot_id, "s1")
      const [request] = yield* requests
      assert.strictEqual(request!.url.pathname, "/v1/playlists/p%2F1/items")
      assert.deepStrictEqual(JSON.parse(request!.body), { uris: ["spotify:track:1"] })
      const control = yield* MockHttpClient
      yield* control.setHandler(() => MockHttpClient.json({ nope: true }, 201))
      const error = yield* Effect.flip(service.playlists.addItems("p", []))
      assert.strictEqual(error._tag, "ApiError")
    }).pipe(Effect.provide(client(() => MockHttpClient.json({ snapshot_id: "s1" }, 201))))
  )

  it.effect("request with a schema-less path returns the JSON; http is prefixed and authenticated", () =>
    Effect.gen(function* () {
      const service = yield* ServiceClient
      assert.deepStrictEqual(yield* service.request("GET", "/anything", { query: { a: 1 } }), { ok: true })
      const response = yield* service.http.get("/other")
      assert.strictEqual(response.status, 200)
      const all = yield* requests
      assert.strictEqual(all[1]!.url.href, `${API_URL}/other`)
      assert.strictEqual(all[1]!.headers.authorization, "Bearer t")
      // the response handed out holds the request without the bearer
      assert.isUndefined(response.request.headers.authorization)
    }).pipe(Effect.provide(client(() => MockHttpClient.json({ ok: true }))))
  )
})
