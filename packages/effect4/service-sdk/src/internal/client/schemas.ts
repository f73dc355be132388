/**
 * The data API's bodies (DESIGN section 5), decoded as the real API sends them: objects of a local file carry `null`
 * ids, an episode or an ad has no artists or album, optional fields may be absent or null.
 */
import * as Schema from "effect/Schema"

const loose = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))
const Id = Schema.NullOr(Schema.String)

export const ArtistRef = Schema.Struct({ id: Id, name: Schema.String, uri: loose(Schema.String) })
export interface ArtistRef extends Schema.Schema.Type<typeof ArtistRef> {}

export const AlbumRef = Schema.Struct({
  id: Id,
  name: Schema.String,
  release_date: loose(Schema.String),
  uri: loose(Schema.String)
})
export interface AlbumRef extends Schema.Schema.Type<typeof AlbumRef> {}

export const AlbumTrack = Schema.Struct({
  id: Id,
  name: Schema.String,
  duration_ms: Schema.Number,
  track_number: loose(Schema.Number),
  artists: loose(Schema.Array(ArtistRef)),
  uri: loose(Schema.String)
})
export interface AlbumTrack extends Schema.Schema.Type<typeof AlbumTrack> {}

export const Album = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  artists: Schema.Array(ArtistRef),
  tracks: Schema.Struct({ items: Schema.Array(AlbumTrack), total: loose(Schema.Number) }),
  release_date: loose(Schema.String),
  uri: loose(Schema.String)
})
export interface Album extends Schema.Schema.Type<typeof Album> {}

export const User = Schema.Struct({
  id: Schema.String,
  display_name: Schema.NullOr(Schema.String),
  email: loose(Schema.String),
  country: loose(Schema.String),
  product: loose(Schema.String)
})
export interface User extends Schema.Schema.Type<typeof User> {}

export const Track = Schema.Struct({
  id: Id,
  name: Schema.String,
  artists: Schema.Array(ArtistRef),
  duration_ms: Schema.Number,
  album: loose(AlbumRef),
  track_number: loose(Schema.Number),
  is_local: loose(Schema.Boolean),
  uri: loose(Schema.String)
})
export interface Track extends Schema.Schema.Type<typeof Track> {}

export const SavedTrack = Schema.Struct({ added_at: Schema.String, track: Track })
export interface SavedTrack extends Schema.Schema.Type<typeof SavedTrack> {}

export const SavedTracksPage = Schema.Struct({
  items: Schema.Array(SavedTrack),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number,
  next: loose(Schema.String)
})
export interface SavedTracksPage extends Schema.Schema.Type<typeof SavedTracksPage> {}

export const Artist = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  genres: loose(Schema.Array(Schema.String)),
  followers: loose(Schema.Struct({ total: Schema.Number })),
  popularity: loose(Schema.Number),
  uri: loose(Schema.String)
})
export interface Artist extends Schema.Schema.Type<typeof Artist> {}

export const FollowedArtists = Schema.Struct({
  artists: Schema.Struct({
    items: Schema.Array(Artist),
    cursors: loose(Schema.Struct({ after: loose(Schema.String), before: loose(Schema.String) })),
    total: Schema.Number,
    limit: loose(Schema.Number),
    next: loose(Schema.String)
  })
})
export interface FollowedArtists extends Schema.Schema.Type<typeof FollowedArtists> {}

export const PlaybackItem = Schema.Struct({
  id: Id,
  name: Schema.String,
  type: loose(Schema.String),
  duration_ms: loose(Schema.Number),
  artists: loose(Schema.Array(ArtistRef)),
  album: loose(AlbumRef),
  uri: loose(Schema.String)
})
export interface PlaybackItem extends Schema.Schema.Type<typeof PlaybackItem> {}

export const PlaybackState = Schema.Struct({
  is_playing: Schema.Boolean,
  progress_ms: loose(Schema.Number),
  item: loose(PlaybackItem),
  currently_playing_type: loose(Schema.String),
  device: loose(
    Schema.Struct({
      id: loose(Schema.String),
      name: Schema.String,
      type: loose(Schema.String),
      is_active: loose(Schema.Boolean),
      volume_percent: loose(Schema.Number)
    })
  ),
  shuffle_state: loose(Schema.Boolean),
  repeat_state: loose(Schema.String),
  timestamp: loose(Schema.Number)
})
export interface PlaybackState extends Schema.Schema.Type<typeof PlaybackState> {}

export const PlaylistSnapshot = Schema.Struct({ snapshot_id: Schema.String })
export interface PlaylistSnapshot extends Schema.Schema.Type<typeof PlaylistSnapshot> {}
