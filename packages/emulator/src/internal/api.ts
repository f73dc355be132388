import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { applyFault } from "./faults.js"
import { FOLLOWED_ARTIST_IDS, USER, userProfile } from "./fixtures.js"
import { json, mediaType, methods, pathname, query } from "./http.js"
import type { AccessTokenEntry, EmulatorState } from "./state.js"

/**
 * A data API error: `{"error": {"status", "message"}}` with that status.
 *
 * @internal
 */
export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly message: string
  readonly headers?: Record<string, string>
}> {}

const apiErrorResponse = (error: ApiError): HttpServerResponse.HttpServerResponse =>
  json({ error: { status: error.status, message: error.message } }, error.status, error.headers)

const badRequest = (message: string) => new ApiError({ status: 400, message })
const notFound = (message: string) => new ApiError({ status: 404, message })

interface Requirement {
  /** needs a user token (authorization code grant), not an app token */
  readonly user: boolean
  /** needs at least one of these scopes */
  readonly anyScope?: ReadonlyArray<string>
}

const INVALID_TOKEN_HEADERS = { "www-authenticate": 'Bearer realm="emulator", error="invalid_token"' }

/** Bearer token usage (RFC 6750 §2.1) and the Service's 401/403 rules. */
const authenticate = (
  state: EmulatorState,
  requirement: Requirement
): Effect.Effect<AccessTokenEntry, ApiError, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const header = request.headers.authorization
    if (header === undefined || header === "") {
      return Effect.fail(
        new ApiError({
          status: 401,
          message: "No token provided",
          headers: { "www-authenticate": 'Bearer realm="emulator"' }
        })
      )
    }
    const match = /^bearer\s+(\S+)\s*$/i.exec(header)
    if (match === null) return Effect.fail(badRequest("Only valid bearer authentication supported"))
    const entry = state.accessTokens.get(match[1]!)
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (entry === undefined || now >= entry.expiresAt) {
        return Effect.fail(
          new ApiError({ status: 401, message: "The access token expired", headers: INVALID_TOKEN_HEADERS })
        )
      }
      if (requirement.user && entry.grant.userId === undefined) {
        return Effect.fail(
          new ApiError({
            status: 403,
            message: "This endpoint needs a user token: an app token (client credentials) cannot access user data"
          })
        )
      }
      if (entry.grant.userId !== undefined) state.recordApiUser(entry.grant.userId)
      const anyScope = requirement.anyScope
      if (anyScope !== undefined && !anyScope.some((scope) => entry.scopes.has(scope))) {
        return Effect.fail(
          new ApiError({ status: 403, message: `Insufficient client scope: needs ${anyScope.join(" or ")}` })
        )
      }
      return Effect.succeed(entry)
    })
  })

const intParam = (
  params: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max: number
): Effect.Effect<number, ApiError> => {
  const raw = params.get(name)
  if (raw === null || raw === "") return Effect.succeed(fallback)
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isNaN(value) || value < min || value > max
    ? Effect.fail(badRequest(`Invalid ${name}: must be an integer from ${min} to ${max}`))
    : Effect.succeed(value)
}

const paging = <A>(url: string, all: ReadonlyArray<A>, limit: number, offset: number, render: (a: A) => unknown) => {
  const total = all.length
  const page = (o: number) => `${url}?offset=${o}&limit=${limit}`
  return {
    href: page(offset),
    items: all.slice(offset, offset + limit).map(render),
    limit,
    offset,
    next: offset + limit < total ? page(offset + limit) : null,
    previous: offset > 0 ? page(Math.max(0, offset - limit)) : null,
    total
  }
}

const isoNow = Effect.map(Clock.currentTimeMillis, (now) => new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z"))

const ID = /^[0-9A-Za-z]{1,64}$/

/** The user of a token that passed `authenticate` with `user: true`. */
const userOf = (entry: AccessTokenEntry): string => entry.grant.userId!

/** Track ids from `?ids=a,b` or a JSON body `{"ids": [...]}`, at most 50, all in the catalogue. */
const trackIds = (
  state: EmulatorState
): Effect.Effect<ReadonlyArray<string>, ApiError, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    let ids: ReadonlyArray<string> | undefined
    const fromQuery = query(request.url).get("ids")
    if (fromQuery !== null) {
      ids = fromQuery.split(",").filter((id) => id.length > 0)
    } else if (mediaType(request.headers["content-type"]) === "application/json") {
      const body = yield* Effect.orElseSucceed(request.json, () => undefined)
      const candidate = (body as { readonly ids?: unknown } | undefined)?.ids
      if (!Array.isArray(candidate) || !candidate.every((id) => typeof id === "string")) {
        return yield* badRequest('Body must be JSON {"ids": [string]}')
      }
      ids = candidate
    }
    if (ids === undefined || ids.length === 0) return yield* badRequest("Missing required parameter: ids")
    if (ids.length > 50) return yield* badRequest("Too many ids requested: at most 50")
    for (const id of ids) {
      if (!ID.test(id) || !state.catalog.tracks.has(id)) return yield* badRequest(`Invalid id: ${id}`)
    }
    return ids
  })

const TRACK_URI = /^[A-Za-z][\w-]*:(track|episode):([0-9A-Za-z]{1,64})$/

const user = (state: EmulatorState) =>
  Effect.map(authenticate(state, { user: true }), (entry) => {
    const profile = userProfile(userOf(entry))
    const body: Record<string, unknown> = {
      id: profile.id,
      display_name: profile.displayName,
      type: "user",
      uri: `service:user:${profile.id}`,
      href: `${state.catalog.apiUrl}/users/${profile.id}`,
      followers: { href: null, total: 3 }
    }
    if (entry.scopes.has("user-read-email")) body.email = profile.email
    if (entry.scopes.has("user-read-private")) {
      body.country = profile.country
      body.product = profile.product
    }
    return json(body)
  })

const album = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: false })
    const { albumId } = yield* HttpRouter.params
    const body = state.catalog.albumJson.get(albumId ?? "")
    if (body === undefined) return yield* notFound(`Non existing id: '${albumId}'`)
    return HttpServerResponse.uint8Array(body, { contentType: "application/json; charset=utf-8" })
  })

const track = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: false })
    const { trackId } = yield* HttpRouter.params
    if (trackId === undefined || !state.catalog.tracks.has(trackId)) {
      return yield* notFound(`Non existing id: '${trackId}'`)
    }
    return json(state.catalog.trackJson(trackId))
  })

const artist = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: false })
    const { artistId } = yield* HttpRouter.params
    if (artistId === undefined || !state.catalog.artists.has(artistId)) {
      return yield* notFound(`Non existing id: '${artistId}'`)
    }
    return json(state.catalog.artistJson(artistId))
  })

const savedTracks = (state: EmulatorState) =>
  Effect.gen(function* () {
    const entry = yield* authenticate(state, { user: true, anyScope: ["user-library-read"] })
    const library = state.library(userOf(entry))
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = query(request.url)
    const limit = yield* intParam(params, "limit", 20, 1, 50)
    const offset = yield* intParam(params, "offset", 0, 0, 100_000)
    return json(
      paging(`${state.catalog.apiUrl}/me/tracks`, library.savedTracks, limit, offset, (saved) => ({
        added_at: saved.addedAt,
        track: state.catalog.trackJson(saved.trackId)
      }))
    )
  })

const saveTracks = (state: EmulatorState) =>
  Effect.gen(function* () {
    const entry = yield* authenticate(state, { user: true, anyScope: ["user-library-modify"] })
    const ids = yield* trackIds(state)
    const addedAt = yield* isoNow
    const library = state.library(userOf(entry))
    for (const id of ids) {
      if (!library.savedTrackIds.has(id)) {
        library.savedTrackIds.add(id)
        library.savedTracks.unshift({ trackId: id, addedAt })
      }
    }
    return HttpServerResponse.empty({ status: 200 })
  })

const removeTracks = (state: EmulatorState) =>
  Effect.gen(function* () {
    const entry = yield* authenticate(state, { user: true, anyScope: ["user-library-modify"] })
    const ids = new Set(yield* trackIds(state))
    const library = state.library(userOf(entry))
    for (let i = library.savedTracks.length - 1; i >= 0; i--) {
      if (ids.has(library.savedTracks[i]!.trackId)) library.savedTracks.splice(i, 1)
    }
    for (const id of ids) library.savedTrackIds.delete(id)
    return HttpServerResponse.empty({ status: 200 })
  })

const followedArtists = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: true, anyScope: ["user-follow-read"] })
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = query(request.url)
    const type = params.get("type")
    if (type === null || type === "") return yield* badRequest("Missing required parameter: type")
    if (type !== "artist") return yield* badRequest("Invalid type: only artist is supported")
    const limit = yield* intParam(params, "limit", 20, 1, 50)
    const after = params.get("after")
    let start = 0
    if (after !== null && after !== "") {
      const index = FOLLOWED_ARTIST_IDS.indexOf(after)
      if (index === -1) return yield* badRequest(`Invalid cursor: after=${after}`)
      start = index + 1
    }
    const ids = FOLLOWED_ARTIST_IDS.slice(start, start + limit)
    const more = start + limit < FOLLOWED_ARTIST_IDS.length
    const last = ids.at(-1)
    const base = `${state.catalog.apiUrl}/me/following?type=artist`
    return json({
      artists: {
        href: `${base}&limit=${limit}${start > 0 ? `&after=${FOLLOWED_ARTIST_IDS[start - 1]}` : ""}`,
        items: ids.map(state.catalog.artistJson),
        limit,
        next: more && last !== undefined ? `${base}&after=${last}&limit=${limit}` : null,
        cursors: { after: more && last !== undefined ? last : null },
        total: FOLLOWED_ARTIST_IDS.length
      }
    })
  })

const playbackState = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: true, anyScope: ["user-read-playback-state"] })
    const playback = state.config.playback
    if (playback === null) return HttpServerResponse.empty({ status: 204 })
    const now = yield* Clock.currentTimeMillis
    return json({
      device: {
        id: "emulator-device",
        is_active: true,
        is_private_session: false,
        is_restricted: false,
        name: "Emulator Speaker",
        type: "Speaker",
        volume_percent: 60,
        supports_volume: true
      },
      repeat_state: "off",
      shuffle_state: false,
      context: null,
      timestamp: now,
      progress_ms: playback.progressMs ?? 0,
      is_playing: playback.isPlaying ?? true,
      item: state.catalog.trackJson(playback.trackId),
      currently_playing_type: "track"
    })
  })

const playlistItems = (state: EmulatorState, playlistId: string, limit: number, offset: number) => {
  const playlist = state.playlists.get(playlistId)!
  return paging(`${state.catalog.apiUrl}/playlists/${playlistId}/items`, playlist.items, limit, offset, (item) => {
    const match = TRACK_URI.exec(item.uri)
    const id = match?.[2]
    return {
      added_at: item.addedAt,
      added_by: { id: USER.id, type: "user" },
      is_local: false,
      track:
        id !== undefined && state.catalog.tracks.has(id)
          ? state.catalog.trackJson(id)
          : { id: id ?? null, uri: item.uri, type: match?.[1] ?? "track", name: null }
    }
  })
}

const findPlaylist = (state: EmulatorState) =>
  Effect.flatMap(HttpRouter.params, ({ playlistId }) =>
    playlistId !== undefined && state.playlists.has(playlistId)
      ? Effect.succeed(playlistId)
      : Effect.fail(notFound(`Non existing id: '${playlistId}'`))
  )

const playlist = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: false })
    const playlistId = yield* findPlaylist(state)
    const info = state.catalog.playlists.get(playlistId)!
    return json({
      id: info.id,
      name: info.name,
      description: info.description,
      public: info.public,
      collaborative: false,
      owner: { id: "service", display_name: "Service", type: "user" },
      snapshot_id: state.playlists.get(playlistId)!.snapshotId,
      type: "playlist",
      uri: `service:playlist:${info.id}`,
      href: `${state.catalog.apiUrl}/playlists/${info.id}`,
      tracks: playlistItems(state, playlistId, 100, 0)
    })
  })

const getPlaylistTracks = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: false })
    const playlistId = yield* findPlaylist(state)
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = query(request.url)
    const limit = yield* intParam(params, "limit", 100, 1, 100)
    const offset = yield* intParam(params, "offset", 0, 0, 100_000)
    return json(playlistItems(state, playlistId, limit, offset))
  })

const addPlaylistItems = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: true, anyScope: ["playlist-modify-public", "playlist-modify-private"] })
    const playlistId = yield* findPlaylist(state)
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = query(request.url)
    let uris: ReadonlyArray<unknown> | undefined
    let position: unknown
    const fromQuery = params.get("uris")
    if (fromQuery !== null) {
      uris = fromQuery.split(",").filter((uri) => uri.length > 0)
      position = params.has("position") ? Number(params.get("position")) : undefined
    } else {
      const text = yield* Effect.orElseSucceed(request.text, () => "")
      if (text.trim() !== "") {
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          return yield* badRequest("Error parsing JSON.")
        }
        if (typeof body !== "object" || body === null || Array.isArray(body)) {
          return yield* badRequest('Body must be a JSON object {"uris": [string]}')
        }
        const candidate = (body as { readonly uris?: unknown }).uris
        if (candidate !== undefined && !Array.isArray(candidate)) return yield* badRequest("uris must be an array")
        uris = candidate
        position = (body as { readonly position?: unknown }).position
      }
    }
    if (uris === undefined || uris.length === 0) return yield* badRequest("No uris provided")
    if (uris.length > 100) return yield* badRequest("You can add a maximum of 100 tracks per request")
    for (const uri of uris) {
      if (typeof uri !== "string" || !TRACK_URI.test(uri)) return yield* badRequest(`Invalid track uri: ${String(uri)}`)
    }
    const playlistState = state.playlists.get(playlistId)!
    let at = playlistState.items.length
    if (position !== undefined) {
      if (typeof position !== "number" || !Number.isInteger(position) || position < 0 || position > at) {
        return yield* badRequest("Index out of bounds")
      }
      at = position
    }
    const addedAt = yield* isoNow
    playlistState.items.splice(at, 0, ...(uris as ReadonlyArray<string>).map((uri) => ({ uri, addedAt })))
    return json({ snapshot_id: state.bumpPlaylist(playlistState, playlistId) }, 201)
  })

/**
 * `POST /playlists/{id}/tracks`: the Service removed it for development-mode apps on 2026-03-09 in favour of
 * `/playlists/{id}/items` and answers 403 (DESIGN section 5).
 */
const removedPlaylistTracks = (state: EmulatorState) =>
  Effect.gen(function* () {
    yield* authenticate(state, { user: true, anyScope: ["playlist-modify-public", "playlist-modify-private"] })
    yield* findPlaylist(state)
    return yield* new ApiError({ status: 403, message: REMOVED_PLAYLIST_TRACKS_MESSAGE })
  })

/** What the Service answers to the removed playlist write. @internal */
export const REMOVED_PLAYLIST_TRACKS_MESSAGE =
  "Forbidden: POST /playlists/{playlist_id}/tracks is not available to development mode apps since 2026-03-09; use POST /playlists/{playlist_id}/items"

const apiMethodNotAllowed = (allow: string) =>
  json({ error: { status: 405, message: "Method not allowed" } }, 405, { allow })

/**
 * The data API under `/v1`: counts every request, applies queued `api` faults, and answers errors as the Service
 * does (`{"error": {"status", "message"}}`).
 *
 * @internal
 */
export const apiApp = (state: EmulatorState) => {
  const router = HttpRouter.empty.pipe(
    HttpRouter.all("/v1/albums/:albumId", methods({ GET: album(state) }, apiMethodNotAllowed)),
    HttpRouter.all("/v1/tracks/:trackId", methods({ GET: track(state) }, apiMethodNotAllowed)),
    HttpRouter.all("/v1/artists/:artistId", methods({ GET: artist(state) }, apiMethodNotAllowed)),
    HttpRouter.all("/v1/me", methods({ GET: user(state) }, apiMethodNotAllowed)),
    HttpRouter.all(
      "/v1/me/tracks",
      methods({ GET: savedTracks(state), PUT: saveTracks(state), DELETE: removeTracks(state) }, apiMethodNotAllowed)
    ),
    HttpRouter.all("/v1/me/following", methods({ GET: followedArtists(state) }, apiMethodNotAllowed)),
    HttpRouter.all("/v1/me/player", methods({ GET: playbackState(state) }, apiMethodNotAllowed)),
    HttpRouter.all("/v1/playlists/:playlistId", methods({ GET: playlist(state) }, apiMethodNotAllowed)),
    HttpRouter.all(
      "/v1/playlists/:playlistId/items",
      methods({ GET: getPlaylistTracks(state), POST: addPlaylistItems(state) }, apiMethodNotAllowed)
    ),
    HttpRouter.all(
      "/v1/playlists/:playlistId/tracks",
      methods({ GET: getPlaylistTracks(state), POST: removedPlaylistTracks(state) }, apiMethodNotAllowed)
    )
  )
  const routed = router.pipe(
    Effect.catchTags({
      ApiError: (error) => Effect.succeed(apiErrorResponse(error)),
      RouteNotFound: () => Effect.succeed(json({ error: { status: 404, message: "Service not found" } }, 404))
    })
  )
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    state.recordApiRequest(pathname(request.url))
    const fault = state.takeFault("api")
    const response = yield* fault === undefined ? routed : applyFault(fault, routed)
    state.recordApiStatus(response.status)
    return response
  }).pipe(Effect.interruptible)
}
