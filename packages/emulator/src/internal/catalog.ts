import {
  ALBUMS,
  ARTISTS,
  type AlbumFixture,
  type ArtistFixture,
  DEFAULT_PLAYLIST_ID,
  LOCAL_FILE,
  TRACKS,
  type TrackFixture,
  URI_SCHEME
} from "./fixtures.js"

/**
 * The fixture catalogue rendered as the data API's JSON objects, once per emulator (hrefs need the port).
 *
 * @internal
 */
export interface Catalog {
  readonly apiUrl: string
  readonly artists: ReadonlyMap<string, ArtistFixture>
  readonly tracks: ReadonlyMap<string, TrackFixture>
  /** `GET /albums/{id}` bodies, serialised and UTF-8 encoded ahead of time (the hot path of the benchmarks) */
  readonly albumJson: ReadonlyMap<string, Uint8Array>
  readonly artistJson: (id: string) => unknown
  /** a catalogue track, or the local file for {@link LOCAL_FILE}'s key */
  readonly trackJson: (id: string) => unknown
  readonly playlists: ReadonlyMap<string, PlaylistInfo>
}

/** @internal */
export interface PlaylistInfo {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly public: boolean
}

/** @internal */
export const uri = (kind: string, id: string): string => `${URI_SCHEME}:${kind}:${id}`

/** @internal */
export const makeCatalog = (apiUrl: string): Catalog => {
  const artists = new Map(ARTISTS.map((artist) => [artist.id, artist] as const))
  const tracks = new Map(TRACKS.map((track) => [track.id, track] as const))
  const albums = new Map(ALBUMS.map((album) => [album.id, album] as const))

  const simpleArtist = (id: string) => {
    const artist = artists.get(id)!
    return { id, name: artist.name, type: "artist", uri: uri("artist", id), href: `${apiUrl}/artists/${id}` }
  }
  const simpleAlbum = (album: AlbumFixture) => ({
    id: album.id,
    name: album.name,
    type: "album",
    album_type: "album",
    total_tracks: album.trackNames.length,
    release_date: album.releaseDate,
    release_date_precision: "day",
    uri: uri("album", album.id),
    href: `${apiUrl}/albums/${album.id}`,
    artists: album.artistIds.map(simpleArtist)
  })
  const simpleTrack = (track: TrackFixture) => ({
    id: track.id,
    name: track.name,
    type: "track",
    uri: uri("track", track.id),
    href: `${apiUrl}/tracks/${track.id}`,
    duration_ms: track.durationMs,
    track_number: track.trackNumber,
    disc_number: 1,
    explicit: track.explicit,
    artists: track.artistIds.map(simpleArtist)
  })

  // as the Service sends a local file: null ids, hrefs and uris of the album and artists, no catalogue data
  const localFileJson = {
    id: null,
    name: LOCAL_FILE.name,
    type: "track",
    is_local: true,
    uri: LOCAL_FILE.uri,
    href: null,
    duration_ms: LOCAL_FILE.durationMs,
    track_number: 0,
    disc_number: 0,
    explicit: false,
    popularity: 0,
    preview_url: null,
    external_ids: {},
    external_urls: {},
    available_markets: [],
    artists: [{ id: null, name: LOCAL_FILE.artist, type: "artist", uri: null, href: null, external_urls: {} }],
    album: {
      id: null,
      name: LOCAL_FILE.album,
      type: "album",
      album_type: null,
      release_date: null,
      release_date_precision: null,
      uri: null,
      href: null,
      images: [],
      artists: [],
      available_markets: [],
      external_urls: {}
    }
  }

  const trackCache = new Map<string, unknown>()
  const trackJson = (id: string): unknown => {
    if (id === LOCAL_FILE.key) return localFileJson
    let json = trackCache.get(id)
    if (json === undefined) {
      const track = tracks.get(id)!
      json = { ...simpleTrack(track), album: simpleAlbum(albums.get(track.albumId)!), popularity: 50 }
      trackCache.set(id, json)
    }
    return json
  }

  const artistJson = (id: string): unknown => {
    const artist = artists.get(id)!
    return {
      ...simpleArtist(id),
      genres: artist.genres,
      popularity: artist.popularity,
      followers: { href: null, total: artist.followers }
    }
  }

  const albumJson = new Map<string, Uint8Array>()
  const encoder = new TextEncoder()
  for (const album of ALBUMS) {
    const items = TRACKS.filter((track) => track.albumId === album.id).map(simpleTrack)
    albumJson.set(
      album.id,
      encoder.encode(
        JSON.stringify({
          ...simpleAlbum(album),
          label: album.label,
          genres: [],
          popularity: 60,
          tracks: {
            href: `${apiUrl}/albums/${album.id}/tracks?offset=0&limit=50`,
            items,
            limit: 50,
            offset: 0,
            next: null,
            previous: null,
            total: items.length
          }
        })
      )
    )
  }

  const playlists = new Map<string, PlaylistInfo>([
    [
      DEFAULT_PLAYLIST_ID,
      {
        id: DEFAULT_PLAYLIST_ID,
        name: "Today's Emulated Hits",
        description: "The hottest tracks on 127.0.0.1.",
        public: true
      }
    ]
  ])

  return { apiUrl, artists, tracks, albumJson, artistJson, trackJson, playlists }
}
