/**
 * The typed resources of the data API, each one `request` with its method, path and Schema.
 * Path segments are URL-encoded.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ServiceClientResources } from "../../ServiceClient.js"
import type { Request } from "./request.js"
import * as Schemas from "./schemas.js"

const segment = (value: string) => encodeURIComponent(value)

const MaybePlaybackState = Schema.UndefinedOr(Schemas.PlaybackState)

export const make = (request: Request): ServiceClientResources => ({
  users: {
    me: request("GET", "/me", { schema: Schemas.User })
  },
  albums: {
    get: (id) => request("GET", `/albums/${segment(id)}`, { schema: Schemas.Album })
  },
  library: {
    savedTracks: (options = {}) =>
      request("GET", "/me/tracks", {
        query: { limit: options.limit, offset: options.offset },
        schema: Schemas.SavedTracksPage
      }),
    // Nothing to save is not worth a request (and the API would answer 400).
    saveTracks: (ids) =>
      ids.length === 0 ? Effect.void : Effect.asVoid(request("PUT", "/me/tracks", { query: { ids: ids.join(",") } }))
  },
  follows: {
    followedArtists: (options = {}) =>
      request("GET", "/me/following", {
        query: { type: "artist", limit: options.limit, after: options.after },
        schema: Schemas.FollowedArtists
      })
  },
  player: {
    // 204 or an empty 200: nothing is playing.
    playbackState: Effect.map(request("GET", "/me/player", { schema: MaybePlaybackState }), Option.fromNullable)
  },
  playlists: {
    // `/items`: the Service removed `/playlists/{id}/tracks` for development-mode apps in 2026 (DESIGN section 5)
    addItems: (id, uris) =>
      request("POST", `/playlists/${segment(id)}/items`, { body: { uris }, schema: Schemas.PlaylistSnapshot })
  }
})
