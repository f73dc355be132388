import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AuthorizationCode, authorizeLocal, ServiceClient, TokenCache, TokenProvider } from "@service-sdk/effect"
import { ApiError, AsyncAuthorizationCode, AsyncServiceClient } from "@service-sdk/effect/promise"
import { Emulator } from "../../src/internal/effectApi.js"
import {
  ALBUM_ID,
  authorizeCode,
  cachedRefreshToken,
  freePort,
  HttpLive,
  PLAYLIST_ID,
  providerOptions,
  REDIRECT_URI,
  statsSince,
  USER_SCOPES,
  userSession
} from "./harness.js"

describe("authorization code against the emulator", () => {
  it.scopedLive("code from /authorize (autoApprove), exchanged for tokens, then users.me", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const since = yield* statsSince(emulator)
      const cache = yield* TokenCache.memory()
      const provider = yield* AuthorizationCode.make({ ...providerOptions(emulator), tokenCache: cache })

      const url = new URL(provider.getAuthorizationUrl({ state: "s-1" }))
      expect(`${url.origin}${url.pathname}`).toBe(`${emulator.authUrl}/authorize`)
      expect(url.searchParams.get("redirect_uri")).toBe(REDIRECT_URI)
      const code = yield* authorizeCode(url.toString(), "s-1")
      const token = yield* provider.exchangeCode(code)
      expect(token.scope?.split(" ").sort()).toEqual([...USER_SCOPES].sort())
      // cached: the provider serves it without another request
      expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(token.accessToken))
      expect(yield* cachedRefreshToken(cache)).toBe(Redacted.value(token.refreshToken!))

      const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
        Effect.provideService(TokenProvider, provider)
      )
      const me = yield* client.users.me
      expect(me.id).toBe("emulator-user")
      expect(me.email).toEqual(expect.any(String)) // user-read-email was granted
      expect(yield* since).toMatchObject({ token: 1, authorization_code: 1, api: 1 })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a code is single use: exchanging it twice is AuthenticationError invalid_grant", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const provider = yield* AuthorizationCode.make(providerOptions(emulator))
      const code = yield* authorizeCode(provider.getAuthorizationUrl({ state: "once" }), "once")
      yield* provider.exchangeCode(code)
      const error = yield* Effect.flip(provider.exchangeCode(code))
      expect(error._tag).toBe("AuthenticationError")
      expect(error).toMatchObject({ status: 400, payload: { error: "invalid_grant" } })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("authorizeLocal: onAuthorizationUrl follows the redirects to the loopback server", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const port = yield* freePort
      const since = yield* statsSince(emulator)
      const cache = yield* TokenCache.memory()
      const provider = yield* AuthorizationCode.make({
        ...providerOptions(emulator),
        redirectUri: `http://127.0.0.1:${port}/callback`,
        tokenCache: cache
      })
      const pages: Array<{ status: number; text: string }> = []
      const token = yield* authorizeLocal({
        openBrowser: false,
        timeout: "10 seconds",
        onAuthorizationUrl: (url) =>
          Effect.promise(async () => {
            const response = await fetch(url) // follows /authorize → 302 → the loopback callback
            pages.push({ status: response.status, text: await response.text() })
          })
      }).pipe(Effect.provideService(AuthorizationCode, provider))
      expect(yield* cachedRefreshToken(cache)).toBe(Redacted.value(token.refreshToken!))
      expect(pages).toHaveLength(1)
      expect(pages[0]!.status).toBe(200)
      expect(yield* since).toMatchObject({ authorization_code: 1 })
      const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
        Effect.provideService(TokenProvider, provider)
      )
      expect((yield* client.users.me).id).toBe("emulator-user")
    }).pipe(Effect.provide(HttpLive))
  )
})

describe("typed resources over a user token", () => {
  it.scopedLive("library.savedTracks pages through the library with limit/offset and next", () =>
    Effect.gen(function* () {
      const { client, emulator } = yield* userSession()
      const since = yield* statsSince(emulator)
      const first = yield* client.library.savedTracks({ limit: 7 })
      expect(first.limit).toBe(7)
      expect(first.offset).toBe(0)
      expect(first.items).toHaveLength(7)
      expect(first.total).toBeGreaterThan(7)
      expect(first.next).toEqual(expect.stringContaining("offset=7"))

      const ids: Array<string | null> = []
      let offset = 0
      for (;;) {
        const page = yield* client.library.savedTracks({ limit: 7, offset })
        ids.push(...page.items.map((item) => item.track.id))
        if (page.next === null) break
        offset += page.items.length
      }
      expect(ids).toHaveLength(first.total)
      expect(new Set(ids).size).toBe(first.total)
      expect(ids.slice(0, 7)).toEqual(first.items.map((item) => item.track.id))
      const seen = yield* since
      expect(seen.token).toBe(0) // the cached token served every page
      expect(seen.api).toBe(1 + Math.ceil(first.total / 7))
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("library.saveTracks puts a track back at the front of the library", () =>
    Effect.gen(function* () {
      const { client } = yield* userSession()
      const before = yield* client.library.savedTracks({ limit: 50 })
      // a catalogue track (a local file has no id to save or remove)
      const id = before.items.find((item) => item.track.id !== null)!.track.id!
      yield* client.request("DELETE", "/me/tracks", { query: { ids: id } })
      const removed = yield* client.library.savedTracks({ limit: 50 })
      expect(removed.total).toBe(before.total - 1)
      expect(removed.items.map((item) => item.track.id)).not.toContain(id)

      yield* client.library.saveTracks([id])
      const after = yield* client.library.savedTracks({ limit: 1 })
      expect(after.total).toBe(before.total)
      expect(after.items[0]!.track.id).toBe(id)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("follows.followedArtists follows the after cursor to the end", () =>
    Effect.gen(function* () {
      const { client } = yield* userSession()
      const first = yield* client.follows.followedArtists({ limit: 2 })
      expect(first.artists.items).toHaveLength(2)
      const names: Array<string> = first.artists.items.map((artist) => artist.name)
      let after = first.artists.cursors?.after ?? null
      while (after !== null) {
        const page = yield* client.follows.followedArtists({ limit: 2, after })
        names.push(...page.artists.items.map((artist) => artist.name))
        after = page.artists.cursors?.after ?? null
      }
      expect(names).toHaveLength(first.artists.total)
      expect(names).toContain("The Loopbacks")
      expect(new Set(names).size).toBe(names.length)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("player.playbackState is none by default (204), some once something plays", () =>
    Effect.gen(function* () {
      const { client, emulator } = yield* userSession()
      const since = yield* statsSince(emulator)
      expect(Option.isNone(yield* client.player.playbackState)).toBe(true)
      expect((yield* since).apiByStatus).toEqual({ "204": 1 })

      const album = yield* client.albums.get(ALBUM_ID)
      const trackId = album.tracks.items[0]!.id
      yield* emulator.configure({ playback: { trackId, isPlaying: true, progressMs: 1234 } })
      const state = yield* client.player.playbackState
      expect(Option.isSome(state)).toBe(true)
      const value = Option.getOrThrow(state)
      expect(value.is_playing).toBe(true)
      expect(value.item?.id).toBe(trackId)
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("playlists.addItems adds tracks and returns a new snapshot id", () =>
    Effect.gen(function* () {
      const { client, emulator } = yield* userSession()
      const album = yield* client.albums.get(ALBUM_ID)
      const uris = album.tracks.items.slice(0, 2).map((track) => `service:track:${track.id}`)
      const since = yield* statsSince(emulator)
      const first = yield* client.playlists.addItems(PLAYLIST_ID, uris)
      const second = yield* client.playlists.addItems(PLAYLIST_ID, uris.slice(0, 1))
      expect(first.snapshot_id).toEqual(expect.any(String))
      expect(second.snapshot_id).not.toBe(first.snapshot_id)
      expect((yield* since).apiByStatus).toEqual({ "201": 2 })
      type PlaylistPage = {
        readonly items: ReadonlyArray<{ readonly track: { readonly id: string } }>
        readonly total: number
      }
      const path = `/playlists/${PLAYLIST_ID}/items`
      const { total } = (yield* client.request("GET", path, { query: { limit: 1 } })) as PlaylistPage
      const last = (yield* client.request("GET", path, { query: { limit: 3, offset: total - 3 } })) as PlaylistPage
      expect(last.items.map((item) => item.track.id)).toEqual([
        album.tracks.items[0]!.id,
        album.tracks.items[1]!.id,
        album.tracks.items[0]!.id
      ])
    }).pipe(Effect.provide(HttpLive))
  )
})

describe("the Promise facade against the emulator", () => {
  it("AsyncAuthorizationCode + AsyncServiceClient: exchange, resources, typed rejections", async () => {
    await using emulator = await Emulator.start({ autoApprove: true })
    const options = {
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl,
      redirectUri: REDIRECT_URI,
      scope: USER_SCOPES
    }
    await using auth = new AsyncAuthorizationCode(options)
    const redirect = await fetch(auth.getAuthorizationUrl({ state: "promise" }), { redirect: "manual" })
    expect(redirect.status).toBe(302)
    const code = AsyncAuthorizationCode.parseResponseUrl(redirect.headers.get("location")!, {
      expectedState: "promise"
    })
    const token = await auth.exchangeCode(code)
    expect(await auth.getAccessToken()).toBe(Redacted.value(token.accessToken))

    await using client = new AsyncServiceClient({ authProvider: auth, apiUrl: emulator.apiUrl })
    expect((await client.users.me()).id).toBe("emulator-user")
    expect((await client.albums.get(ALBUM_ID)).id).toBe(ALBUM_ID)
    expect((await client.library.savedTracks({ limit: 3 })).items).toHaveLength(3)
    expect(await client.player.playbackState()).toBeUndefined()

    // an app token on /me: the rejection is the SDK's own ApiError, not a FiberFailure
    await using app = new AsyncServiceClient({
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl,
      apiUrl: emulator.apiUrl
    })
    const error = await app.users.me().then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(403)

    const stats = await emulator.stats()
    expect(stats.tokenRequests).toMatchObject({ authorization_code: 1, client_credentials: 1, refresh_token: 0 })
  })
})
