/**
 * Shared set-up for the integration tests: the SDK against an in-process emulator over real loopback HTTP.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"
import { AuthorizationCode, ServiceClient, TokenCache, TokenProvider } from "@service-sdk/effect"
import { Emulator, type EmulatorOptions, type Stats } from "../../src/internal/effectApi.js"
import { request } from "../utils.js"

export { ALBUM_ID, PLAYLIST_ID } from "../utils.js"

/** The HTTP client of every test: undici, as in production. */
export const HttpLive = NodeHttpClient.layerUndici

/** Never listened on: the tests read the code from the `Location` header instead of following the redirect. */
export const REDIRECT_URI = "http://127.0.0.1:8765/callback"

/** Every scope the typed resources need. */
export const USER_SCOPES: ReadonlyArray<string> = [
  "user-read-private",
  "user-read-email",
  "user-library-read",
  "user-library-modify",
  "user-follow-read",
  "user-read-playback-state",
  "playlist-modify-public"
]

/**
 * `GET` the authorization URL as a browser would but without following the redirect (the emulator runs with
 * `autoApprove`), and return the `code` of the `Location` it redirects to, checking the `state`.
 */
export const authorizeCode = (url: string, expectedState: string) =>
  Effect.gen(function* () {
    const reply = yield* Effect.orDie(request(url))
    const location = reply.headers.get("location")
    if (reply.status !== 302 || location === null) {
      return yield* Effect.die(`expected a redirect from /authorize, got ${reply.status}: ${reply.text}`)
    }
    return yield* AuthorizationCode.parseResponseUrl(location, { expectedState })
  })

/** The refresh token in `cache`, as plain text (undefined when none). */
export const cachedRefreshToken = (cache: TokenCache.TokenCache) =>
  Effect.map(cache.get, (token) =>
    Option.getOrUndefined(
      Option.map(
        Option.flatMapNullable(token, (t) => t.refreshToken),
        Redacted.value
      )
    )
  )

/** The access token in `cache`, as plain text (undefined when none). */
export const cachedAccessToken = (cache: TokenCache.TokenCache) =>
  Effect.map(cache.get, (token) => Option.getOrUndefined(Option.map(token, (t) => Redacted.value(t.accessToken))))

export interface StatsDelta {
  readonly token: number
  readonly client_credentials: number
  readonly authorization_code: number
  readonly refresh_token: number
  readonly api: number
  /** API responses by status since the snapshot (statuses with no new response are left out) */
  readonly apiByStatus: Readonly<Record<string, number>>
}

const diff = (before: Stats, after: Stats): StatsDelta => {
  const apiByStatus: Record<string, number> = {}
  for (const [status, count] of Object.entries(after.apiRequests.byStatus)) {
    const added = count - (before.apiRequests.byStatus[status] ?? 0)
    if (added !== 0) apiByStatus[status] = added
  }
  return {
    token: after.tokenRequests.total - before.tokenRequests.total,
    client_credentials: after.tokenRequests.client_credentials - before.tokenRequests.client_credentials,
    authorization_code: after.tokenRequests.authorization_code - before.tokenRequests.authorization_code,
    refresh_token: after.tokenRequests.refresh_token - before.tokenRequests.refresh_token,
    api: after.apiRequests.total - before.apiRequests.total,
    apiByStatus
  }
}

/** Snapshots the emulator's counters; the returned Effect reads what the emulator saw since. */
export const statsSince = (emulator: Emulator.Service) =>
  Effect.map(emulator.stats, (before) => Effect.map(emulator.stats, (after) => diff(before, after)))

export interface UserSessionOptions {
  readonly emulator?: EmulatorOptions
  readonly provider?: Omit<AuthorizationCode.Options, "tokenCache">
  readonly client?: ServiceClient.Options
}

export interface UserSession {
  readonly emulator: Emulator.Service
  /** the provider's cache, held here to look at the refresh token */
  readonly cache: TokenCache.TokenCache
  readonly provider: AuthorizationCode.Service
  readonly client: ServiceClient.Service
}

/** The provider options pointing at `emulator`, its default client and {@link REDIRECT_URI}. */
export const providerOptions = (emulator: Emulator.Service) => ({
  clientId: emulator.clientId,
  clientSecret: emulator.clientSecret,
  authUrl: emulator.authUrl,
  redirectUri: REDIRECT_URI,
  scope: USER_SCOPES
})

/**
 * An emulator (with `autoApprove`), an `AuthorizationCode` provider on a memory cache we hold, seeded by a real code
 * exchange, and a `ServiceClient` on that provider.
 */
export const userSession = (
  options: UserSessionOptions = {}
): Effect.Effect<UserSession, unknown, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const emulator = yield* Emulator.make({ autoApprove: true, ...options.emulator })
    const cache = yield* TokenCache.memory()
    const provider = yield* AuthorizationCode.make({
      ...providerOptions(emulator),
      ...options.provider,
      tokenCache: cache
    })
    const code = yield* authorizeCode(provider.getAuthorizationUrl({ state: "integration" }), "integration")
    yield* provider.exchangeCode(code)
    const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl, ...options.client }).pipe(
      Effect.provideService(TokenProvider, provider)
    )
    return { emulator, cache, provider, client }
  })

/** A port that was free a moment ago on 127.0.0.1 (for `authorizeLocal`'s redirect URI). */
export const freePort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})
