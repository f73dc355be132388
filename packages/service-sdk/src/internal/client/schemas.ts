/**
 * The data API's objects, modelled loosely: the fields a program needs are required, the rest
 * optional (`null` reads as absent), unknown fields are dropped by decoding. Objects of a local file
 * (`is_local: true`) carry `null` ids (track, album, artists): those ids are `string | null` (DESIGN section 5).
 */
import * as Schema from "effect/Schema"

/** An optional field that may also arrive as `null`; both read as absent. */
const loose = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true })

/** An id the API sends as `null` for a local file (a file on the user's device, not in the catalogue). */
const LocalId = Schema.NullOr(Schema.String)

/** An artist as other objects embed it (`id` is `null` for the artist of a local file). */
export const ArtistRef = Schema.Struct({
  id: LocalId,
  name: Schema.String,
  uri: loose(Schema.String)
})
export interface ArtistRef extends Schema.Schema.Type<typeof ArtistRef> {}

/** An album as a track embeds it (`id` is `null` for the album of a local file). */
export const AlbumRef = Schema.Struct({
  id: LocalId,
  name: Schema.String,
  release_date: loose(Schema.String),
  uri: loose(Schema.String)
})
export interface AlbumRef extends Schema.Schema.Type<typeof AlbumRef> {}

/** A track of an album's track list. */
export const AlbumTrack = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  duration_ms: Schema.Number,
  track_number: loose(Schema.Number),
  artists: loose(Schema.Array(ArtistRef)),
  uri: loose(Schema.String)
})
export interface AlbumTrack extends Schema.Schema.Type<typeof AlbumTrack> {}

/** `GET /albums/{id}` */
export const Album = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  artists: Schema.Array(ArtistRef),
  tracks: Schema.Struct({
    items: Schema.Array(AlbumTrack),
    total: loose(Schema.Number)
  }),
  release_date: loose(Schema.String),
  uri: loose(Schema.String)
})
export interface Album extends Schema.Schema.Type<typeof Album> {}

/** `GET /me` */
export const User = Schema.Struct({
  id: Schema.String,
  display_name: Schema.NullOr(Schema.String),
  email: loose(Schema.String),
  country: loose(Schema.String),
  product: loose(Schema.String)
})
export interface User extends Schema.Schema.Type<typeof User> {}

/** A full track, as the library and the player return it (`id` is `null` for a local file, `is_local: true`). */
export const Track = Schema.Struct({
  id: LocalId,
  name: Schema.String,
  artists: Schema.Array(ArtistRef),
  duration_ms: Schema.Number,
  album: loose(AlbumRef),
  track_number: loose(Schema.Number),
  is_local: loose(Schema.Boolean),
  uri: loose(Schema.String)
})
export interface Track extends Schema.Schema.Type<typeof Track> {}

/** An item of `GET /me/tracks`. */
export const SavedTrack = Schema.Struct({
  added_at: Schema.String,
  track: Track
})
export interface SavedTrack extends Schema.Schema.Type<typeof SavedTrack> {}

/** An offset-paged list; `next` is the URL of the next page, `null` on the last one. */
export const Paging = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({
    items: Schema.Array(item),
    total: Schema.Number,
    limit: Schema.Number,
    offset: Schema.Number,
    next: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
  })
export interface Paging<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly next: string | null
}

export const SavedTracksPage = Paging(SavedTrack)

/** An artist with its details. */
export const Artist = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  genres: loose(Schema.Array(Schema.String)),
  followers: loose(Schema.Struct({ total: Schema.Number })),
  popularity: loose(Schema.Number),
  uri: loose(Schema.String)
})
export interface Artist extends Schema.Schema.Type<typeof Artist> {}

/** `GET /me/following?type=artist`: cursor-paged; `cursors.after` is absent on the last page. */
export const FollowedArtists = Schema.Struct({
  artists: Schema.Struct({
    items: Schema.Array(Artist),
    cursors: Schema.optionalWith(
      Schema.Struct({
        after: loose(Schema.String),
        before: loose(Schema.String)
      }),
      { nullable: true, default: () => ({}) }
    ),
    total: Schema.Number,
    limit: loose(Schema.Number),
    next: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
  })
})
export interface FollowedArtists extends Schema.Schema.Type<typeof FollowedArtists> {}

/** The device a playback runs on. */
export const Device = Schema.Struct({
  id: loose(Schema.String),
  name: Schema.String,
  type: loose(Schema.String),
  is_active: loose(Schema.Boolean),
  volume_percent: loose(Schema.Number)
})
export interface Device extends Schema.Schema.Type<typeof Device> {}

/**
 * What is playing: a track, a local file (`id: null`, `is_local: true`) or an episode (no artists or album, so they
 * are optional here; `type` says which).
 */
export const PlaybackItem = Schema.Struct({
  id: LocalId,
  name: Schema.String,
  type: loose(Schema.String),
  duration_ms: loose(Schema.Number),
  artists: loose(Schema.Array(ArtistRef)),
  album: loose(AlbumRef),
  is_local: loose(Schema.Boolean),
  uri: loose(Schema.String)
})
export interface PlaybackItem extends Schema.Schema.Type<typeof PlaybackItem> {}

/**
 * `GET /me/player` when something is playing (or paused). An ad has no item (`item: null`,
 * `currently_playing_type: "ad"`).
 */
export const PlaybackState = Schema.Struct({
  is_playing: Schema.Boolean,
  progress_ms: loose(Schema.Number),
  item: loose(PlaybackItem),
  currently_playing_type: loose(Schema.String),
  device: loose(Device),
  shuffle_state: loose(Schema.Boolean),
  repeat_state: loose(Schema.String),
  timestamp: loose(Schema.Number)
})
export interface PlaybackState extends Schema.Schema.Type<typeof PlaybackState> {}

/** `POST /playlists/{id}/items` */
export const PlaylistSnapshot = Schema.Struct({
  snapshot_id: Schema.String
})
export interface PlaylistSnapshot extends Schema.Schema.Type<typeof PlaylistSnapshot> {}
