/**
 * The typed resources against the bodies the real API sends (DESIGN section 5): a local file's `null` ids, an
 * episode or an ad in the player, and nothing playing as 204 or an empty 200.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Option, type Schema } from "effect"
import { ServiceClient } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { decodeOr } from "../../src/internal/client/decode.js"
import * as SchemaModule from "../../src/internal/client/schemas.js"
import { clientLayer, ok } from "../ServiceClient.helpers.js"

const Schemas = SchemaModule.schemas()

/** A local file as the Service lists it in a library or a playlist (`is_local: true`: every id, href and uri null). */
const localFileTrack = {
  album: {
    album_type: null,
    artists: [],
    available_markets: [],
    external_urls: {},
    href: null,
    id: null,
    images: [],
    name: "Basement Tapes",
    release_date: null,
    release_date_precision: null,
    type: "album",
    uri: null
  },
  artists: [{ external_urls: {}, href: null, id: null, name: "The Loopbacks", type: "artist", uri: null }],
  available_markets: [],
  disc_number: 0,
  duration_ms: 201000,
  explicit: false,
  external_ids: {},
  external_urls: {},
  href: null,
  id: null,
  is_local: true,
  name: "Demo Tape (Home Recording)",
  popularity: 0,
  preview_url: null,
  track_number: 0,
  type: "track",
  uri: "service:local:The+Loopbacks:Basement+Tapes:Demo+Tape:201"
}

const device = {
  id: "d1",
  is_active: true,
  is_private_session: false,
  is_restricted: false,
  name: "Laptop",
  type: "Computer",
  volume_percent: 60,
  supports_volume: true
}

const playing = (item: unknown, type: string) => ({
  device,
  repeat_state: "off",
  shuffle_state: false,
  context: null,
  timestamp: 1764158400000,
  progress_ms: 42000,
  is_playing: true,
  item,
  currently_playing_type: type,
  actions: { disallows: { resuming: true } }
})

const episode = {
  id: "ep1",
  name: "Episode One",
  type: "episode",
  duration_ms: 1800000,
  uri: "service:episode:ep1",
  description: "An episode has a show, no artists and no album",
  show: { id: "show1", name: "A Show", publisher: "Someone" },
  images: [],
  release_date: "2026-01-01"
}

describe("typed resources decode every real body", () => {
  it.effect("a local file in the library: null track, album and artist ids, typed and kept as null", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const page = yield* client.library.savedTracks({ limit: 2 })
      const local = page.items[0]!.track
      expect(local.id).toBeNull()
      expect(local.is_local).toBe(true)
      expect(local.album?.id).toBeNull()
      expect(local.artists.map((artist) => artist.id)).toStrictEqual([null])
      expect(local.name).toBe("Demo Tape (Home Recording)")
      expect(page.items[1]!.track.id).toBe("t1")
    }).pipe(
      Effect.provide(
        clientLayer(() =>
          ok({
            href: "h",
            items: [
              { added_at: "2026-01-02T00:00:00Z", track: localFileTrack },
              {
                added_at: "2026-01-01T00:00:00Z",
                track: { ...localFileTrack, id: "t1", is_local: false, album: { id: "al", name: "A" } }
              }
            ],
            limit: 2,
            offset: 0,
            next: null,
            previous: null,
            total: 2
          })
        )
      )
    )
  )

  it.effect("a local file playing: the whole playback state (is_playing, device, progress) is kept", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const state = yield* client.player.playbackState
      expect(Option.isSome(state)).toBe(true)
      if (Option.isNone(state)) return
      expect(state.value.is_playing).toBe(true)
      expect(state.value.progress_ms).toBe(42000)
      expect(state.value.device?.name).toBe("Laptop")
      expect(state.value.item?.id).toBeNull()
      expect(state.value.item?.is_local).toBe(true)
      expect(state.value.item?.album?.id).toBeNull()
    }).pipe(Effect.provide(clientLayer(() => ok(playing(localFileTrack, "track")))))
  )

  it.effect("an episode (no artists, no album) and an ad (no item) in the player", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const ep = Option.getOrThrow(yield* client.player.playbackState)
      expect(ep.item?.type).toBe("episode")
      expect(ep.item?.id).toBe("ep1")
      expect(ep.item?.artists).toBeUndefined()
      expect(ep.item?.album).toBeUndefined()
      const ad = Option.getOrThrow(yield* client.player.playbackState)
      expect(ad.currently_playing_type).toBe("ad")
      expect(ad.item).toBeUndefined()
      expect(ad.is_playing).toBe(true)
    }).pipe(
      Effect.provide(clientLayer(MockHttpClient.script(ok(playing(episode, "episode")), ok(playing(null, "ad")))))
    )
  )

  it.effect("nothing playing: 204 and an empty 200 are both Option.none()", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      expect(yield* client.player.playbackState).toStrictEqual(Option.none())
      expect(yield* client.player.playbackState).toStrictEqual(Option.none())
      expect(yield* client.player.playbackState).toStrictEqual(Option.none())
    }).pipe(
      Effect.provide(
        clientLayer(
          MockHttpClient.script(
            { status: 204 },
            { status: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: "" },
            { status: 200, body: "  \n" }
          )
        )
      )
    )
  )
})

/** A string id, or `null` where the API may send one (a local file). */
const nullableId = fc.option(fc.stringMatching(/^[0-9A-Za-z]{22}$/), { nil: null })
const optionalNull = <A>(value: fc.Arbitrary<A>) => fc.oneof(value, fc.constant(null), fc.constant(undefined))

const artistBody = fc.record({
  id: nullableId,
  name: fc.string(),
  uri: optionalNull(fc.string()),
  href: optionalNull(fc.string())
})
const albumBody = fc.record({
  id: nullableId,
  name: fc.string(),
  release_date: optionalNull(fc.string()),
  uri: optionalNull(fc.string()),
  album_type: optionalNull(fc.string()),
  images: fc.constant([])
})
const trackBody = fc.record({
  id: nullableId,
  name: fc.string(),
  artists: fc.array(artistBody, { maxLength: 3 }),
  duration_ms: fc.nat(),
  album: optionalNull(albumBody),
  track_number: optionalNull(fc.nat()),
  is_local: optionalNull(fc.boolean()),
  uri: optionalNull(fc.string()),
  preview_url: fc.constant(null)
})
const episodeBody = fc.record({
  id: fc.string({ minLength: 1 }),
  name: fc.string(),
  type: fc.constant("episode"),
  duration_ms: optionalNull(fc.nat()),
  uri: optionalNull(fc.string()),
  show: fc.record({ id: fc.string(), name: fc.string() })
})

const decode = <A, I>(schema: Schema.Schema<A, I>, body: unknown) =>
  Effect.runSync(Effect.either(decodeOr(schema, body, (error) => error)))

describe("properties: bodies with nulls where the API may send them", () => {
  it.prop(
    "a saved-tracks page decodes, and each id comes back as sent (a string or null)",
    [fc.array(trackBody, { maxLength: 5 })],
    ([tracks]) => {
      const body = {
        items: tracks.map((track) => ({ added_at: "2026-01-01T00:00:00Z", track })),
        total: tracks.length,
        limit: 20,
        offset: 0,
        next: null
      }
      const decoded = decode(Schemas.SavedTracksPage, body)
      expect(decoded._tag).toBe("Right")
      if (decoded._tag !== "Right") return
      decoded.right.items.forEach((item, index) => {
        const sent = tracks[index]!
        expect(item.track.id).toBe(sent.id)
        expect(item.track.artists.map((artist) => artist.id)).toStrictEqual(sent.artists.map((artist) => artist.id))
        expect(item.track.album?.id).toBe(sent.album == null ? undefined : sent.album.id)
      })
    }
  )

  it.prop(
    "a playback state decodes whatever plays: a track, a local file, an episode, or an ad (null item)",
    [fc.oneof(trackBody, episodeBody, fc.constant(null)), fc.boolean(), optionalNull(fc.nat())],
    ([item, isPlaying, progress]) => {
      const decoded = decode(Schemas.PlaybackState, {
        is_playing: isPlaying,
        progress_ms: progress,
        item,
        device: { id: null, name: "Speaker", volume_percent: null },
        currently_playing_type: item === null ? "ad" : "track"
      })
      expect(decoded._tag).toBe("Right")
      if (decoded._tag !== "Right") return
      expect(decoded.right.is_playing).toBe(isPlaying)
      expect(decoded.right.item?.id).toBe(item === null ? undefined : item.id)
    }
  )
})
