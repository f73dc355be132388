import { createHash } from "node:crypto"
import { fixtureId } from "./random.js"

/** @internal */
export const URI_SCHEME = "service"

/** @internal */
export const DEFAULT_ALBUM_ID = "6akEvsycLGftJxYudPjmqK"

/** @internal */
export const DEFAULT_PLAYLIST_ID = "37i9dQZF1DXcBWIGoYBM5M"

/** @internal */
export const USER_ID = "emulator-user"

/** @internal */
export interface ArtistFixture {
  readonly id: string
  readonly name: string
  readonly genres: ReadonlyArray<string>
  readonly popularity: number
  readonly followers: number
}

/** @internal */
export interface TrackFixture {
  readonly id: string
  readonly name: string
  readonly albumId: string
  readonly artistIds: ReadonlyArray<string>
  readonly durationMs: number
  readonly trackNumber: number
  readonly explicit: boolean
}

/** @internal */
export interface AlbumFixture {
  readonly id: string
  readonly name: string
  readonly artistIds: ReadonlyArray<string>
  readonly releaseDate: string
  readonly label: string
  readonly trackNames: ReadonlyArray<string>
}

const artist = (name: string, genres: ReadonlyArray<string>, popularity: number, followers: number): ArtistFixture => ({
  id: fixtureId(`artist:${name}`),
  name,
  genres,
  popularity,
  followers
})

/** @internal */
export const ARTISTS: ReadonlyArray<ArtistFixture> = [
  artist("The Loopbacks", ["indie rock"], 71, 1_204_331),
  artist("Null Route", ["synthwave"], 64, 402_118),
  artist("Grant Type", ["electropop"], 58, 210_907),
  artist("The Bearer Tokens", ["post-punk"], 66, 530_442),
  artist("Redirect URI", ["dream pop"], 52, 98_310),
  artist("Cache Miss", ["math rock"], 47, 61_002),
  artist("Single Flight", ["shoegaze"], 55, 143_876),
  artist("Retry After", ["ambient"], 43, 37_551),
  artist("Jitter", ["idm"], 49, 72_660),
  artist("Exponential Backoff", ["drone"], 38, 12_904),
  artist("Clock Skew", ["krautrock"], 45, 51_237),
  artist("Stale While Revalidate", ["slowcore"], 41, 23_018)
]

const artistId = (index: number): string => ARTISTS[index]!.id

/** @internal */
export const ALBUMS: ReadonlyArray<AlbumFixture> = [
  {
    id: DEFAULT_ALBUM_ID,
    name: "Loopback Sessions",
    artistIds: [artistId(0)],
    releaseDate: "2019-03-08",
    label: "127 Records",
    trackNames: [
      "Localhost",
      "Port Zero",
      "Keep-Alive",
      "Three-Way Handshake",
      "Time To Live",
      "Connection Reset",
      "Half-Open",
      "Nagle",
      "Slow Start",
      "Window Scaling",
      "FIN_WAIT",
      "Graceful Shutdown"
    ]
  },
  {
    id: fixtureId("album:Ephemeral Ports"),
    name: "Ephemeral Ports",
    artistIds: [artistId(1)],
    releaseDate: "2021-10-22",
    label: "Loopback Audio",
    trackNames: [
      "49152",
      "SYN Flood",
      "Blackhole",
      "Default Gateway",
      "Subnet",
      "Anycast",
      "Multicast",
      "TTL Exceeded",
      "Traceroute",
      "Null Route"
    ]
  },
  {
    id: fixtureId("album:Refresh"),
    name: "Refresh",
    artistIds: [artistId(2), artistId(4)],
    releaseDate: "2023-05-12",
    label: "Opaque Strings",
    trackNames: [
      "Client Credentials",
      "Authorization Code",
      "Consent",
      "Redirect",
      "State",
      "Rotation",
      "Invalid Grant",
      "No-Store"
    ]
  },
  {
    id: fixtureId("album:Scope Creep"),
    name: "Scope Creep",
    artistIds: [artistId(3)],
    releaseDate: "2017-01-27",
    label: "Bearer Music",
    trackNames: [
      "Read Private",
      "Read Email",
      "Library Read",
      "Library Modify",
      "Follow Read",
      "Playback State",
      "Modify Public",
      "Modify Private",
      "Insufficient Scope",
      "Forbidden"
    ]
  }
]

const buildTracks = (): ReadonlyArray<TrackFixture> => {
  const tracks: Array<TrackFixture> = []
  for (const album of ALBUMS) {
    album.trackNames.forEach((name, index) => {
      tracks.push({
        id: fixtureId(`track:${album.id}:${name}`),
        name,
        albumId: album.id,
        artistIds: album.artistIds,
        durationMs: 150_000 + ((index * 37_411 + name.length * 1_009) % 150_000),
        trackNumber: index + 1,
        explicit: index % 5 === 4
      })
    })
  }
  return tracks
}

/** @internal */
export const TRACKS: ReadonlyArray<TrackFixture> = buildTracks()

/**
 * A local file: a file on the user's device that the Service lists among tracks with `null` track, album and artist
 * ids and `is_local: true` (DESIGN section 5). Its key is not a catalogue id (it has a `-`), so no API call takes it.
 *
 * @internal
 */
export const LOCAL_FILE = {
  key: "local-file",
  name: "Demo Tape (Home Recording)",
  artist: "The Loopbacks",
  album: "Basement Tapes",
  durationMs: 201_000,
  uri: `${URI_SCHEME}:local:The+Loopbacks:Basement+Tapes:Demo+Tape+%28Home+Recording%29:201`
} as const

/**
 * The first 30 catalogue tracks are saved in the user's library at start, most recently added first, with the
 * {@link LOCAL_FILE} third (so the first page of every client meets a local file). @internal
 */
export const INITIAL_SAVED_TRACKS: ReadonlyArray<{ readonly trackId: string; readonly addedAt: string }> = [
  ...TRACKS.slice(0, 2).map((track) => track.id),
  LOCAL_FILE.key,
  ...TRACKS.slice(2, 30).map((track) => track.id)
].map((trackId, index) => ({
  trackId,
  addedAt: new Date(Date.UTC(2024, 0, 31, 12, 0, 0) - index * 86_400_000).toISOString().replace(".000Z", "Z")
}))

const OTHER_USER_SAVED = 12

/**
 * A user's saved tracks at start: `emulator-user` has {@link INITIAL_SAVED_TRACKS}; any other user has 12 catalogue
 * tracks picked from a hash of their id (stable, and different users see different libraries).
 *
 * @internal
 */
export const initialSavedTracks = (
  userId: string
): ReadonlyArray<{ readonly trackId: string; readonly addedAt: string }> => {
  if (userId === USER_ID) return INITIAL_SAVED_TRACKS
  const rank = (trackId: string) => createHash("sha256").update(`${userId}:${trackId}`).digest("hex")
  const picked = TRACKS.map((track) => ({ trackId: track.id, rank: rank(track.id) }))
    .sort((a, b) => (a.rank < b.rank ? -1 : 1))
    .slice(0, OTHER_USER_SAVED)
  return picked.map(({ trackId }, index) => ({
    trackId,
    addedAt: new Date(Date.UTC(2024, 2, 31, 12, 0, 0) - index * 86_400_000).toISOString().replace(".000Z", "Z")
  }))
}

/** Every fixture artist is followed, in this order (the cursor order). @internal */
export const FOLLOWED_ARTIST_IDS: ReadonlyArray<string> = ARTISTS.map((artist) => artist.id)

/** @internal */
export const INITIAL_PLAYLIST_TRACK_IDS: ReadonlyArray<string> = [
  TRACKS[0]!.id,
  TRACKS[12]!.id,
  TRACKS[22]!.id,
  TRACKS[30]!.id,
  TRACKS[5]!.id
]

/** @internal */
export const USER = {
  id: USER_ID,
  displayName: "Emulator User",
  email: "emulator-user@example.com",
  country: "SE",
  product: "premium"
} as const

/**
 * A user's profile: `emulator-user` is {@link USER}; any other id gets a profile named after it.
 *
 * @internal
 */
export const userProfile = (
  userId: string
): {
  readonly id: string
  readonly displayName: string
  readonly email: string
  readonly country: string
  readonly product: string
} =>
  userId === USER_ID
    ? USER
    : {
        id: userId,
        displayName: userId,
        email: `${userId.toLowerCase()}@example.com`,
        country: "SE",
        product: "premium"
      }

/**
 * Scopes the accounts service knows, with the text the consent page shows.
 *
 * @internal
 */
export const SCOPES: ReadonlyMap<string, string> = new Map([
  ["user-read-private", "Read your subscription details and country"],
  ["user-read-email", "Read your email address"],
  ["user-library-read", "Read your saved tracks"],
  ["user-library-modify", "Save and remove tracks in your library"],
  ["user-follow-read", "See the artists you follow"],
  ["user-follow-modify", "Follow and unfollow artists"],
  ["user-read-playback-state", "Read what is playing and on which device"],
  ["user-modify-playback-state", "Control playback on your devices"],
  ["user-read-currently-playing", "Read what is playing"],
  ["user-read-recently-played", "Read your recently played tracks"],
  ["user-top-read", "Read your top artists and tracks"],
  ["playlist-read-private", "Read your private playlists"],
  ["playlist-read-collaborative", "Read collaborative playlists"],
  ["playlist-modify-public", "Change your public playlists"],
  ["playlist-modify-private", "Change your private playlists"]
])
