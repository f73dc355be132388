/**
 * The typed resources against the emulator's real-shaped bodies, over loopback HTTP: the local file in the library
 * and in the player (null ids), nothing playing, and `playlists.addItems` on `/items` (DESIGN section 5).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Emulator } from "../../src/internal/effectApi.js"
import { HttpLive, PLAYLIST_ID, statsSince, userSession } from "./harness.js"

describe("real bodies through the typed resources", () => {
  it.scopedLive("the local file decodes in the library and in the player; nothing playing is none", () =>
    Effect.gen(function* () {
      const { client, emulator } = yield* userSession({
        provider: { scope: ["user-library-read", "user-read-playback-state", "playlist-modify-public"] }
      })
      const page = yield* client.library.savedTracks({ limit: 5 })
      const local = page.items.find((item) => item.track.is_local === true)
      expect(local?.track.id).toBeNull()
      expect(local?.track.album?.id).toBeNull()
      expect(local?.track.artists.map((artist) => artist.id)).toEqual([null])
      expect(page.items.filter((item) => item.track.id !== null)).toHaveLength(4)

      expect(yield* client.player.playbackState).toStrictEqual(Option.none())
      yield* emulator.configure({ playback: { trackId: Emulator.localFileTrackId, progressMs: 7 } })
      const playing = Option.getOrThrow(yield* client.player.playbackState)
      expect(playing).toMatchObject({ is_playing: true, progress_ms: 7, item: { id: null, is_local: true } })
      expect(playing.device?.name).toEqual(expect.any(String))

      const since = yield* statsSince(emulator)
      const snapshot = yield* client.playlists.addItems(PLAYLIST_ID, ["service:track:4iV5W9uYEdYUVa79Axb7Rh"])
      expect(snapshot.snapshot_id).toEqual(expect.any(String))
      expect((yield* since).apiByStatus).toEqual({ "201": 1 })
    }).pipe(Effect.provide(HttpLive))
  )
})
