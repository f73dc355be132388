/**
 * A local emulator of the Service: the accounts service (`POST /api/token`, `GET /authorize`) and the data API
 * (`/v1`) on one loopback HTTP server, with fault injection and request statistics for tests and benchmarks.
 *
 * The published package is a bundle with no dependency and no peer (it carries the runtime it runs on), so it
 * installs beside Effect 3, Effect 4 or no Effect at all; its API is plain: {@link Emulator.start} gives a running
 * emulator for Promise code. Effect programs get it as a layer from their own line's `@service-sdk/effect/testing`
 * (`Emulator.layer`).
 *
 * @since 1.0.0
 */
import * as internal from "./internal/emulator.js"

/**
 * A registered OAuth client.
 *
 * @since 1.0.0
 * @category models
 */
export interface ClientRegistration {
  readonly clientId: string
  /**
   * absent for a public client (RFC 6749 §2.1): it authenticates with `client_id` in the body and must use PKCE
   * (since 0.2.0)
   */
  readonly clientSecret?: string | undefined
  /**
   * the redirect URIs this client may use, under the Service's rules: `https`, or `http` on a loopback IP literal
   * (`127.0.0.1`, `[::1]`; never `localhost`); a loopback URI registered without a port matches any port. When
   * absent, any `http` URI on a loopback IP literal is accepted.
   */
  readonly redirectUris?: ReadonlyArray<string>
}

/**
 * What `GET /v1/me/player` reports; `null` means nothing is playing (204).
 *
 * @since 1.0.0
 * @category models
 */
export interface PlaybackState {
  /** a catalogue track id, or {@link Emulator.localFileTrackId} for the local file (`null` ids, `is_local: true`) */
  readonly trackId: string
  readonly isPlaying?: boolean
  readonly progressMs?: number
}

/**
 * Options of `Emulator.start` (and of `Emulator.layer` in `@service-sdk/effect/testing`): the port, registered clients, token lifetime, refresh-token rotation, automatic consent and PKCE enforcement.
 *
 * @since 1.0.0
 * @category models
 */
export interface EmulatorOptions {
  /** the port to listen on; 0 (the default) picks a free one */
  readonly port?: number
  /** the only interface the emulator binds */
  readonly host?: "127.0.0.1"
  /**
   * extra registered clients; the default client `emulator-client` / `emulator-secret` and the public client
   * `emulator-public-client` (no secret) are always registered
   */
  readonly clients?: ReadonlyArray<ClientRegistration>
  /** access token lifetime in seconds (default 3600) */
  readonly tokenLifetime?: number
  /**
   * refresh token lifetime in seconds, counted from the user's sign-in and not extended by refreshing (the Service:
   * 180 days, 15552000): token responses then carry `refresh_token_expires_in`, and a refresh after the end is
   * `invalid_grant`. Default: refresh tokens never end (since 0.2.0)
   */
  readonly refreshTokenLifetime?: number | null
  /** return a new refresh token on every refresh and invalidate the old one (default false) */
  readonly rotateRefreshTokens?: boolean
  /** `/authorize` redirects at once instead of showing the consent page (default false) */
  readonly autoApprove?: boolean
  /** every client must use PKCE (S256), confidential ones too (default false; public clients always must) */
  readonly requirePkce?: boolean
  /** fixed extra latency in milliseconds on every `/api/token` response, for benchmarks (default 0) */
  readonly tokenLatencyMs?: number
  /** what the player reports at start (default `null`: nothing playing) */
  readonly playback?: PlaybackState | null
  /**
   * called with one line per answered request: `GET /v1/me 200 3 ms` (method, path without its query, status,
   * milliseconds; never a token or code). Default: none. The bins print these lines unless `--quiet`.
   */
  readonly onRequest?: (line: string) => void
}

/**
 * Settings that can change while the emulator runs; omitted fields keep their value.
 *
 * @since 1.0.0
 * @category models
 */
export interface EmulatorConfig {
  readonly tokenLifetime?: number
  /** see {@link EmulatorOptions.refreshTokenLifetime}; `null` turns the end off (since 0.2.0) */
  readonly refreshTokenLifetime?: number | null
  readonly rotateRefreshTokens?: boolean
  readonly autoApprove?: boolean
  readonly requirePkce?: boolean
  readonly playback?: PlaybackState | null
}

/**
 * Request counters since start (or the last reset), as served by `GET /__emulator/stats`.
 *
 * @since 1.0.0
 * @category models
 */
export interface Stats {
  readonly tokenRequests: {
    readonly total: number
    readonly client_credentials: number
    readonly authorization_code: number
    readonly refresh_token: number
  }
  readonly apiRequests: {
    readonly total: number
    /** final status code → count (a connection reset has no status and is not counted here) */
    readonly byStatus: Readonly<Record<string, number>>
    /** request path without the query, e.g. `/v1/albums/6akEvsycLGftJxYudPjmqK` → count */
    readonly byPath: Readonly<Record<string, number>>
  }
}

/**
 * A fault for the next `count` requests to the token endpoint (`"token"`) or the data API (`"api"`).
 * Faults queue in order. `delayMs` waits first; then `reset` destroys the connection, `malformed` answers 200 with
 * truncated JSON, `status`/`body` answer with that instead (status defaults to 500 when only `body` is given, body
 * defaults to a fitting JSON error); `headers` are added to whatever is sent.
 *
 * @since 1.0.0
 * @category models
 */
export interface Fault {
  readonly target: "token" | "api"
  /** how many requests it affects (default 1) */
  readonly count?: number
  readonly status?: number
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
  readonly delayMs?: number
  readonly reset?: boolean
  readonly malformed?: boolean
}

/**
 * Who to sign in with {@link EmulatorHandle.signIn}.
 *
 * @since 1.0.0
 * @category models
 */
export interface SignInOptions {
  /** any id matching `[A-Za-z0-9_-]{1,64}` */
  readonly userId: string
  /** the granted scope (default: every scope the emulator knows) */
  readonly scope?: string | ReadonlyArray<string> | undefined
  /** the client the tokens are issued to (default `emulator-client`) */
  readonly clientId?: string | undefined
  /**
   * the first access token's lifetime in seconds (default: the configured `tokenLifetime`), e.g. to stagger users'
   * expiries; refreshed tokens get the configured lifetime
   */
  readonly expiresIn?: number | undefined
}

/**
 * The tokens {@link EmulatorHandle.signIn} issues, as the token endpoint would answer them.
 *
 * @since 1.0.0
 * @category models
 */
export interface SignInTokens {
  readonly access_token: string
  readonly refresh_token: string
  /** seconds */
  readonly expires_in: number
  readonly scope: string
  /** seconds before the refresh token ends, when `refreshTokenLifetime` is set (since 0.2.0) */
  readonly refresh_token_expires_in?: number
}

/**
 * The running emulator for plain (Promise) code, from {@link Emulator.start}.
 *
 * @since 1.0.0
 * @category models
 */
export interface EmulatorHandle extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` (token endpoint at `/api/token`, consent at `/authorize`) */
  readonly authUrl: string
  /** `http://127.0.0.1:<port>/v1` */
  readonly apiUrl: string
  readonly port: number
  /** the default client's id, `emulator-client` */
  readonly clientId: string
  /** the default client's secret, `emulator-secret` */
  readonly clientSecret: string
  /** the public client's id, `emulator-public-client` (no secret; PKCE required) */
  readonly publicClientId: string
  readonly stats: () => Promise<Stats>
  readonly injectFault: (fault: Fault) => Promise<void>
  readonly configure: (config: EmulatorConfig) => Promise<void>
  /** revokes an access or refresh token; resolves to whether it was known */
  readonly revoke: (token: string) => Promise<boolean>
  /** signs a user in as if they had approved the consent page (since 0.2.0) */
  readonly signIn: (options: SignInOptions) => Promise<SignInTokens>
  /** data API requests made with a valid user token, by user id, since start or reset (since 0.2.0) */
  readonly apiRequestsByUser: () => Promise<Readonly<Record<string, number>>>
  readonly reset: () => Promise<void>
  /** stops the server (idempotent) */
  readonly close: () => Promise<void>
}

/**
 * The default client id.
 *
 * @since 1.0.0
 * @category constants
 */
export const defaultClientId: string = internal.defaultClientId

/**
 * The default client secret.
 *
 * @since 1.0.0
 * @category constants
 */
export const defaultClientSecret: string = internal.defaultClientSecret

/**
 * The id of the public client registered by default (no secret; it must use PKCE).
 *
 * @since 1.0.0
 * @category constants
 */
export const defaultPublicClientId: string = internal.defaultPublicClientId

/**
 * The `trackId` of the local file in the fixtures (a file on the user's device: the Service sends it with `null`
 * track, album and artist ids). It is third in `emulator-user`'s library; `playback: { trackId: localFileTrackId }`
 * plays it.
 *
 * @since 1.0.0
 * @category constants
 */
export const localFileTrackId: string = internal.localFileTrackId

/**
 * Starts an emulator for plain code on a free loopback port (or `options.port`). Call `close()` (or use
 * `await using`) to stop it. Rejects with an `EmulatorError` for bad options or a port in use.
 *
 * @example
 * ```ts
 * import { Emulator } from "@service-sdk/emulator"
 *
 * await using emulator = await Emulator.start({ autoApprove: true })
 * const response = await fetch(`${emulator.authUrl}/api/token`, {
 *   method: "POST",
 *   headers: { authorization: `Basic ${btoa(`${emulator.clientId}:${emulator.clientSecret}`)}` },
 *   body: new URLSearchParams({ grant_type: "client_credentials" })
 * })
 * console.log(response.status, await emulator.stats())
 * ```
 *
 * @since 1.0.0
 * @category constructors
 */
export const start: (options?: EmulatorOptions) => Promise<EmulatorHandle> = internal.start

/**
 * The emulator for plain code: {@link start} and the default clients' credentials.
 *
 * @since 1.0.0
 * @category constructors
 */
export const Emulator: {
  /**
   * Starts an emulator for plain code on a free loopback port (or `options.port`); stop it with `close()` or
   * `await using`. Rejects with an `EmulatorError` for bad options or a port in use.
   *
   * @example
   * ```ts
   * import { Emulator } from "@service-sdk/emulator"
   *
   * await using emulator = await Emulator.start({ autoApprove: true })
   * await emulator.injectFault({ target: "api", count: 1, status: 503 })
   * console.log(emulator.authUrl, await emulator.stats())
   * ```
   */
  readonly start: (options?: EmulatorOptions) => Promise<EmulatorHandle>
  /** the default confidential client's id, `emulator-client` */
  readonly defaultClientId: string
  /** the default confidential client's secret, `emulator-secret` */
  readonly defaultClientSecret: string
  /** the public client's id, `emulator-public-client` (no secret; PKCE required) */
  readonly defaultPublicClientId: string
  /** the `trackId` of the local file in the fixtures (`null` ids, `is_local: true`) */
  readonly localFileTrackId: string
} = { start, defaultClientId, defaultClientSecret, defaultPublicClientId, localFileTrackId }

/**
 * The types that go with {@link Emulator}.
 *
 * @since 1.0.0
 */
export declare namespace Emulator {
  /**
   * {@link EmulatorOptions}: what `Emulator.start` takes.
   *
   * @since 1.0.0
   * @category models
   */
  export type Options = EmulatorOptions
  /**
   * {@link EmulatorHandle}: the running emulator `Emulator.start` resolves to.
   *
   * @since 1.0.0
   * @category models
   */
  export type Handle = EmulatorHandle
}
