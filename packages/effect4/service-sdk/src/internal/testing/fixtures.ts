/**
 * Valid bodies of every typed resource, as the data API sends them (JSON): what a test answers from a mock HTTP
 * client or a stub `fetch`, tweaked with overrides. Plain data (no Effect), so plain code can use them too. Typed by
 * the resources' own schemas (their encoded side), so a body that no longer decodes fails to compile. The same
 * bodies as the Effect 3 line's `Fixtures` (test/publicNames compares them).
 */
import type * as Schemas from "../client/schemas.js"

type Encoded<S extends { readonly Encoded: unknown }> = S["Encoded"]

/** A wire body of a resource (what `JSON.parse` of the response gives). */
export type UserBody = Encoded<typeof Schemas.User>
export type ArtistRefBody = Encoded<typeof Schemas.ArtistRef>
export type AlbumBody = Encoded<typeof Schemas.Album>
export type AlbumTrackBody = Encoded<typeof Schemas.AlbumTrack>
export type TrackBody = Encoded<typeof Schemas.Track>
export type SavedTrackBody = Encoded<typeof Schemas.SavedTrack>
export type SavedTracksPageBody = Encoded<typeof Schemas.SavedTracksPage>
export type ArtistBody = Encoded<typeof Schemas.Artist>
export type FollowedArtistsBody = Encoded<typeof Schemas.FollowedArtists>
export type PlaybackStateBody = Encoded<typeof Schemas.PlaybackState>
export type PlaylistSnapshotBody = Encoded<typeof Schemas.PlaylistSnapshot>

const artistRef = (overrides: Partial<ArtistRefBody> = {}): ArtistRefBody => ({
  id: "0TnOYISbd1XYRBk9myaseg",
  name: "Test Artist",
  uri: "spotify:artist:0TnOYISbd1XYRBk9myaseg",
  ...overrides
})

const albumTrack = (overrides: Partial<AlbumTrackBody> = {}): AlbumTrackBody => ({
  id: "4iV5W9uYEdYUVa79Axb7Rh",
  name: "Test Track",
  duration_ms: 215_000,
  track_number: 1,
  artists: [artistRef()],
  uri: "spotify:track:4iV5W9uYEdYUVa79Axb7Rh",
  ...overrides
})

const album = (overrides: Partial<AlbumBody> = {}): AlbumBody => ({
  id: "6akEvsycLGftJxYudPjmqK",
  name: "Test Album",
  artists: [artistRef()],
  tracks: {
    items: [albumTrack(), albumTrack({ id: "1301WleyT98MSxVHPZCA6M", name: "Second Track", track_number: 2 })],
    total: 2
  },
  release_date: "2024-01-01",
  uri: "spotify:album:6akEvsycLGftJxYudPjmqK",
  ...overrides
})

const user = (overrides: Partial<UserBody> = {}): UserBody => ({
  id: "test-user",
  display_name: "Test User",
  email: "test-user@example.com",
  country: "SE",
  product: "premium",
  ...overrides
})

const track = (overrides: Partial<TrackBody> = {}): TrackBody => ({
  id: "4iV5W9uYEdYUVa79Axb7Rh",
  name: "Test Track",
  artists: [artistRef()],
  duration_ms: 215_000,
  album: { id: "6akEvsycLGftJxYudPjmqK", name: "Test Album", release_date: "2024-01-01" },
  track_number: 1,
  uri: "spotify:track:4iV5W9uYEdYUVa79Axb7Rh",
  ...overrides
})

const savedTrack = (overrides: Partial<SavedTrackBody> = {}): SavedTrackBody => ({
  added_at: "2024-06-01T12:00:00Z",
  track: track(),
  ...overrides
})

const savedTracksPage = (
  items: ReadonlyArray<SavedTrackBody> = [savedTrack()],
  overrides: Partial<SavedTracksPageBody> = {}
): SavedTracksPageBody => ({
  items,
  total: items.length,
  limit: 20,
  offset: 0,
  next: null,
  ...overrides
})

const artist = (overrides: Partial<ArtistBody> = {}): ArtistBody => ({
  id: "0TnOYISbd1XYRBk9myaseg",
  name: "Test Artist",
  genres: ["test"],
  followers: { total: 1000 },
  popularity: 50,
  uri: "spotify:artist:0TnOYISbd1XYRBk9myaseg",
  ...overrides
})

const followedArtists = (
  items: ReadonlyArray<ArtistBody> = [artist()],
  overrides: Partial<FollowedArtistsBody["artists"]> = {}
): FollowedArtistsBody => ({
  artists: { items, cursors: {}, total: items.length, limit: 20, next: null, ...overrides }
})

const playbackState = (overrides: Partial<PlaybackStateBody> = {}): PlaybackStateBody => ({
  is_playing: true,
  progress_ms: 30_000,
  item: {
    id: "4iV5W9uYEdYUVa79Axb7Rh",
    name: "Test Track",
    duration_ms: 215_000,
    artists: [artistRef()],
    album: { id: "6akEvsycLGftJxYudPjmqK", name: "Test Album" }
  },
  device: { id: "device-1", name: "Test Device", type: "Computer", is_active: true, volume_percent: 50 },
  shuffle_state: false,
  repeat_state: "off",
  timestamp: 1_700_000_000_000,
  ...overrides
})

const playlistSnapshot = (overrides: Partial<PlaylistSnapshotBody> = {}): PlaylistSnapshotBody => ({
  snapshot_id: "test-snapshot",
  ...overrides
})

/**
 * A valid body for each typed resource, as the data API sends it. Each is a function that returns a fresh object;
 * pass overrides for the fields your test is about (a shallow merge):
 * `Fixtures.album({ name: "Blue" })`, `Fixtures.savedTracksPage([Fixtures.savedTrack()], { total: 40 })`.
 */
export const Fixtures = {
  /** `GET /me` (`users.me`) */
  user,
  /** `GET /albums/{id}` (`albums.get`) */
  album,
  /** a track of an album's `tracks.items` */
  albumTrack,
  /** an artist as albums and tracks embed it */
  artistRef,
  /** a full track (saved tracks, the player) */
  track,
  /** an item of `GET /me/tracks` */
  savedTrack,
  /** `GET /me/tracks` (`library.savedTracks`): a page of saved tracks */
  savedTracksPage,
  /** an artist with its details */
  artist,
  /** `GET /me/following?type=artist` (`follows.followedArtists`) */
  followedArtists,
  /** `GET /me/player` (`player.playbackState`) when something plays */
  playbackState,
  /** `POST /playlists/{id}/items` (`playlists.addItems`) */
  playlistSnapshot
} as const
