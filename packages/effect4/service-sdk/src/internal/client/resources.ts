/**
 * The typed resources of the data API (DESIGN section 5), each one `request` with its method, path and Schema (the
 * SDK's own schemas, decoded by the compiled pass of `decode.ts`). Path segments are URL-encoded.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { decodeSynchronously, type Request } from "./request.js"
import * as Schemas from "./schemas.js"

const segment = (value: string) => encodeURIComponent(value)

const MaybePlaybackState = Schema.UndefinedOr(Schemas.PlaybackState)

for (const schema of [
  Schemas.User,
  Schemas.Album,
  Schemas.SavedTracksPage,
  Schemas.FollowedArtists,
  MaybePlaybackState,
  Schemas.PlaylistSnapshot
]) {
  decodeSynchronously(schema)
}

/** The typed resources of the data API (DESIGN section 5), each one `request` with its method, path and Schema. */
export const make = (request: Request) => ({
  users: {
    me: request("GET", "/me", { schema: Schemas.User })
  },
  albums: {
    get: (id: string) => request("GET", `/albums/${segment(id)}`, { schema: Schemas.Album })
  },
  library: {
    savedTracks: (options: { readonly limit?: number | undefined; readonly offset?: number | undefined } = {}) =>
      request("GET", "/me/tracks", {
        query: { limit: options.limit, offset: options.offset },
        schema: Schemas.SavedTracksPage
      }),
    // nothing to save is not worth a request (and the API would answer 400)
    saveTracks: (ids: ReadonlyArray<string>) =>
      ids.length === 0 ? Effect.void : Effect.asVoid(request("PUT", "/me/tracks", { query: { ids: ids.join(",") } }))
  },
  follows: {
    followedArtists: (options: { readonly limit?: number | undefined; readonly after?: string | undefined } = {}) =>
      request("GET", "/me/following", {
        query: { type: "artist", limit: options.limit, after: options.after },
        schema: Schemas.FollowedArtists
      })
  },
  player: {
    // 204 or an empty 200: nothing is playing
    playbackState: Effect.map(request("GET", "/me/player", { schema: MaybePlaybackState }), Option.fromUndefinedOr)
  },
  playlists: {
    addItems: (id: string, uris: ReadonlyArray<string>) =>
      request("POST", `/playlists/${segment(id)}/items`, { body: { uris }, schema: Schemas.PlaylistSnapshot })
  }
})
