/**
 * The data API's objects, modelled loosely: the fields a program needs are required, the rest
 * optional (`null` reads as absent), unknown fields are dropped by decoding. Objects of a local file
 * (`is_local: true`) carry `null` ids (track, album, artists): those ids are `string | null` (DESIGN section 5).
 */
import * as Schema from "effect/Schema"

/** An optional field that may also arrive as `null`; both read as absent. */
const loose = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true })

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

/** The schemas, built on first use: nothing of them is evaluated at import (issue 31). */
const define = () => {
  /** An id the API sends as `null` for a local file (a file on the user's device, not in the catalogue). */
  const LocalId = Schema.NullOr(Schema.String)

  /** An artist as other objects embed it (`id` is `null` for the artist of a local file). */
  const ArtistRef = Schema.Struct({
    id: LocalId,
    name: Schema.String,
    uri: loose(Schema.String)
  })

  /** An album as a track embeds it (`id` is `null` for the album of a local file). */
  const AlbumRef = Schema.Struct({
    id: LocalId,
    name: Schema.String,
    release_date: loose(Schema.String),
    uri: loose(Schema.String)
  })

  /** A track of an album's track list. */
  const AlbumTrack = Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    duration_ms: Schema.Number,
    track_number: loose(Schema.Number),
    artists: loose(Schema.Array(ArtistRef)),
    uri: loose(Schema.String)
  })

  /** `GET /albums/{id}` */
  const Album = Schema.Struct({
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

  /** `GET /me` */
  const User = Schema.Struct({
    id: Schema.String,
    display_name: Schema.NullOr(Schema.String),
    email: loose(Schema.String),
    country: loose(Schema.String),
    product: loose(Schema.String)
  })

  /** A full track, as the library and the player return it (`id` is `null` for a local file, `is_local: true`). */
  const Track = Schema.Struct({
    id: LocalId,
    name: Schema.String,
    artists: Schema.Array(ArtistRef),
    duration_ms: Schema.Number,
    album: loose(AlbumRef),
    track_number: loose(Schema.Number),
    is_local: loose(Schema.Boolean),
    uri: loose(Schema.String)
  })

  /** An item of `GET /me/tracks`. */
  const SavedTrack = Schema.Struct({
    added_at: Schema.String,
    track: Track
  })

  const SavedTracksPage = Paging(SavedTrack)

  /** An artist with its details. */
  const Artist = Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    genres: loose(Schema.Array(Schema.String)),
    followers: loose(Schema.Struct({ total: Schema.Number })),
    popularity: loose(Schema.Number),
    uri: loose(Schema.String)
  })

  /** `GET /me/following?type=artist`: cursor-paged; `cursors.after` is absent on the last page. */
  const FollowedArtists = Schema.Struct({
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

  /** The device a playback runs on. */
  const Device = Schema.Struct({
    id: loose(Schema.String),
    name: Schema.String,
    type: loose(Schema.String),
    is_active: loose(Schema.Boolean),
    volume_percent: loose(Schema.Number)
  })

  /**
   * What is playing: a track, a local file (`id: null`, `is_local: true`) or an episode (no artists or album, so they
   * are optional here; `type` says which).
   */
  const PlaybackItem = Schema.Struct({
    id: LocalId,
    name: Schema.String,
    type: loose(Schema.String),
    duration_ms: loose(Schema.Number),
    artists: loose(Schema.Array(ArtistRef)),
    album: loose(AlbumRef),
    is_local: loose(Schema.Boolean),
    uri: loose(Schema.String)
  })

  /**
   * `GET /me/player` when something is playing (or paused). An ad has no item (`item: null`,
   * `currently_playing_type: "ad"`).
   */
  const PlaybackState = Schema.Struct({
    is_playing: Schema.Boolean,
    progress_ms: loose(Schema.Number),
    item: loose(PlaybackItem),
    currently_playing_type: loose(Schema.String),
    device: loose(Device),
    shuffle_state: loose(Schema.Boolean),
    repeat_state: loose(Schema.String),
    timestamp: loose(Schema.Number)
  })

  /** `POST /playlists/{id}/items` */
  const PlaylistSnapshot = Schema.Struct({
    snapshot_id: Schema.String
  })

  /** The player's answer: 204 or an empty 200 read as `undefined`. */
  const MaybePlaybackState = Schema.UndefinedOr(PlaybackState)

  return {
    ArtistRef,
    AlbumRef,
    AlbumTrack,
    Album,
    User,
    Track,
    SavedTrack,
    SavedTracksPage,
    Artist,
    FollowedArtists,
    Device,
    PlaybackItem,
    PlaybackState,
    PlaylistSnapshot,
    MaybePlaybackState
  }
}

export type Defined = ReturnType<typeof define>

let defined: Defined | undefined

/** The data API's schemas (built once, on the first call). */
export const schemas = (): Defined => {
  if (defined === undefined) defined = define()
  return defined
}

export interface ArtistRef extends Schema.Schema.Type<Defined["ArtistRef"]> {}

export interface AlbumRef extends Schema.Schema.Type<Defined["AlbumRef"]> {}

export interface AlbumTrack extends Schema.Schema.Type<Defined["AlbumTrack"]> {}

export interface Album extends Schema.Schema.Type<Defined["Album"]> {}

export interface User extends Schema.Schema.Type<Defined["User"]> {}

export interface Track extends Schema.Schema.Type<Defined["Track"]> {}

export interface SavedTrack extends Schema.Schema.Type<Defined["SavedTrack"]> {}

export interface Artist extends Schema.Schema.Type<Defined["Artist"]> {}

export interface FollowedArtists extends Schema.Schema.Type<Defined["FollowedArtists"]> {}

export interface Device extends Schema.Schema.Type<Defined["Device"]> {}

export interface PlaybackItem extends Schema.Schema.Type<Defined["PlaybackItem"]> {}

export interface PlaybackState extends Schema.Schema.Type<Defined["PlaybackState"]> {}

export interface PlaylistSnapshot extends Schema.Schema.Type<Defined["PlaylistSnapshot"]> {}
