/**
 * The typed resources of the data API, each one `request` with its method, path and Schema.
 * Path segments are URL-encoded.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ServiceClientResources } from "../../ServiceClient.js"
import type { Request } from "./request.js"
import * as Schemas from "./schemas.js"

const segment = (value: string) => encodeURIComponent(value)

export const make = (request: Request): ServiceClientResources => {
  // built on the first client's construction, not at import
  const schemas = Schemas.schemas()
  return {
    users: {
      me: request("GET", "/me", { schema: schemas.User })
    },
    albums: {
      get: (id) => request("GET", `/albums/${segment(id)}`, { schema: schemas.Album })
    },
    library: {
      savedTracks: (options = {}) =>
        request("GET", "/me/tracks", {
          query: { limit: options.limit, offset: options.offset },
          schema: schemas.SavedTracksPage
        }),
      // Nothing to save is not worth a request (and the API would answer 400).
      saveTracks: (ids) =>
        ids.length === 0 ? Effect.void : Effect.asVoid(request("PUT", "/me/tracks", { query: { ids: ids.join(",") } }))
    },
    follows: {
      followedArtists: (options = {}) =>
        request("GET", "/me/following", {
          query: { type: "artist", limit: options.limit, after: options.after },
          schema: schemas.FollowedArtists
        })
    },
    player: {
      // 204 or an empty 200: nothing is playing.
      playbackState: Effect.map(
        request("GET", "/me/player", { schema: schemas.MaybePlaybackState }),
        Option.fromNullable
      )
    },
    playlists: {
      // `/items`: the Service removed `/playlists/{id}/tracks` for development-mode apps in 2026 (DESIGN section 5)
      addItems: (id, uris) =>
        request("POST", `/playlists/${segment(id)}/items`, { body: { uris }, schema: schemas.PlaylistSnapshot })
    }
  }
}
