/**
 * `service-sdk/testing`'s `Fixtures`: a valid body for every typed resource, decoded by the resources themselves
 * through the mock HTTP client, tweaked with overrides, and a fresh object on every call.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServiceClient } from "@service-sdk/effect"
import { Fixtures, MockHttpClient, TestTokenProvider } from "@service-sdk/effect/testing"

/** A client whose every request is answered by `route` (by path). */
const clientAnswering = (route: (path: string) => unknown) =>
  ServiceClient.layer({ apiUrl: "http://127.0.0.1:1/v1", maxRetries: 0 }).pipe(
    Layer.provide(TestTokenProvider.layer("test-token")),
    Layer.provideMerge(
      MockHttpClient.layer((request) => ({
        status: request.method === "POST" ? 201 : 200,
        body: route(request.url.pathname)
      }))
    )
  )

describe("Fixtures", () => {
  it.effect("every resource decodes its fixture", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const me = yield* client.users.me
      expect(me.id).toBe("test-user")
      const album = yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
      expect(album.tracks.items).toHaveLength(2)
      const saved = yield* client.library.savedTracks({ limit: 20 })
      expect(saved.items[0]!.track.name).toBe("Test Track")
      const followed = yield* client.follows.followedArtists({ limit: 20 })
      expect(followed.artists.items[0]!.name).toBe("Test Artist")
      const playback = yield* client.player.playbackState
      expect(Option.map(playback, (state) => state.is_playing)).toEqual(Option.some(true))
      const snapshot = yield* client.playlists.addItems("37i9dQZF1DXcBWIGoYBM5M", ["spotify:track:x"])
      expect(snapshot.snapshot_id).toBe("test-snapshot")
    }).pipe(
      Effect.provide(
        clientAnswering((path) => {
          if (path === "/v1/me") return Fixtures.user()
          if (path.startsWith("/v1/albums/")) return Fixtures.album()
          if (path === "/v1/me/tracks") return Fixtures.savedTracksPage()
          if (path === "/v1/me/following") return Fixtures.followedArtists()
          if (path === "/v1/me/player") return Fixtures.playbackState()
          return Fixtures.playlistSnapshot()
        })
      )
    )
  )

  it.effect("overrides tweak a body and it still decodes", () =>
    Effect.gen(function* () {
      const album = yield* (yield* ServiceClient).albums.get("x")
      expect(album.name).toBe("Blue")
      expect(album.artists.map((artist) => artist.name)).toEqual(["Joni"])
      const saved = yield* (yield* ServiceClient).library.savedTracks({ limit: 1 })
      expect(saved.total).toBe(40)
    }).pipe(
      Effect.provide(
        clientAnswering((path) =>
          path === "/v1/me/tracks"
            ? Fixtures.savedTracksPage([Fixtures.savedTrack()], {
                total: 40,
                next: "http://127.0.0.1:1/v1/me/tracks?offset=1"
              })
            : Fixtures.album({ name: "Blue", artists: [Fixtures.artistRef({ name: "Joni" })] })
        )
      )
    )
  )

  it("returns a fresh object on every call", () => {
    const first = Fixtures.album()
    ;(first.tracks.items as Array<unknown>).length = 0
    expect(Fixtures.album().tracks.items).toHaveLength(2)
    expect(Fixtures.user()).not.toBe(Fixtures.user())
  })
})
