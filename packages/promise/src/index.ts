/**
 * `@service-sdk/promise`: the Promise API of service-sdk as one self-contained package (no dependencies, no peers).
 * The code is `@service-sdk/effect/promise` of the Effect 4 line (2.x), bundled with the Effect runtime it uses; the types below describe it in plain
 * TypeScript (no Effect type), and `test/types.test.ts` checks, by the compiler, that each one says what the facade's
 * own type says (the same option names, inputs the facade takes, outputs that fit): a change on either side fails
 * `tsc -b`.
 *
 * @module @service-sdk/promise
 * @since 1.0.0
 */
// The Effect 4 line's facade (packages/effect4), bundled with the Effect 4 runtime it uses (scripts/build.mjs): by
// path, as the workspace's `@service-sdk/effect` is the Effect 3 line
import { startScoped } from "../../effect4/service-sdk/src/internal/promise/scoped.js"
import * as Facade from "../../effect4/service-sdk/src/promise.js"

/**
 * A facade value under its plain description, where the two cannot be compared by plain assignment: a `Secret`, a
 * token and a connected Redis cache are opaque here where the facade names Effect types, and the facade's classes
 * have private fields. `test/types.test.ts` compares the descriptions instead.
 */
const described = <P>(value: unknown): P => value as P

declare global {
  /**
   * `Symbol.asyncDispose` (ES2024 explicit resource management), declared so that these declarations compile in a
   * project whose `lib` lacks it (`"lib": ["ES2022"]`); the same declaration as TypeScript's `esnext.disposable`.
   */
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol
  }
}

// The public classes named here (the errors name themselves in `ServiceError.ts`), whatever the minifier keeps:
// `AsyncServiceClient.name`, `constructor.name` and what `console.log` prints stay real with or without esbuild's
// `keepNames` (scripts/build.mjs).
for (const [value, name] of [
  [Facade.AsyncTokenProvider, "AsyncTokenProvider"],
  [Facade.AsyncClientCredentials, "AsyncClientCredentials"],
  [Facade.AsyncAuthorizationCode, "AsyncAuthorizationCode"],
  [Facade.AsyncUserTokenProvider, "AsyncUserTokenProvider"],
  [Facade.AsyncUserTokens, "AsyncUserTokens"],
  [Facade.AsyncServiceClient, "AsyncServiceClient"]
] as const) {
  Object.defineProperty(value, "name", { value: name, configurable: true })
}

// ---------------------------------------------------------------------------------------------------------------
// Plain data

/**
 * A secret (a token, a PKCE verifier): prints and serialises as `<redacted>`. Pass it back to the SDK as is.
 *
 * @since 1.0.0
 */
export interface Secret {
  readonly toString: () => string
}

/**
 * A length of time: milliseconds, or text such as `"30 seconds"`, `"5 minutes"`.
 *
 * @since 1.0.0
 */
export type DurationInput =
  | number
  | `${number} ${"millis" | "milli" | "seconds" | "second" | "minutes" | "minute" | "hours" | "hour" | "days" | "day"}`

/**
 * A length of time as the SDK reports it (`RateLimitError.retryAfter`); {@link toMillis} reads it.
 *
 * @since 1.0.0
 */
export interface Duration {
  readonly value:
    | { readonly _tag: "Millis"; readonly millis: number }
    | { readonly _tag: "Nanos"; readonly nanos: bigint }
    | { readonly _tag: "Infinity" }
    | { readonly _tag: "NegativeInfinity" }
}

/**
 * Milliseconds of a {@link Duration} (`Infinity`, or `-Infinity`, for an infinite one).
 *
 * @since 1.0.0
 */
export const toMillis = (duration: Duration): number =>
  duration.value._tag === "Millis"
    ? duration.value.millis
    : duration.value._tag === "Nanos"
      ? Number(duration.value.nanos) / 1e6
      : duration.value._tag === "Infinity"
        ? Number.POSITIVE_INFINITY
        : Number.NEGATIVE_INFINITY

/**
 * Tokens as the SDK keeps them. `expiresAt` is in seconds since the Unix epoch. Its JSON form ({@link TokenInfoJson},
 * from {@link tokenInfoToJson}) is what the file and Redis caches store.
 *
 * @since 1.0.0
 */
export interface TokenInfo {
  readonly accessToken: Secret
  readonly expiresAt: number
  readonly refreshToken?: Secret | undefined
  readonly scope?: string | undefined
  readonly clientId?: string | undefined
  readonly authUrl?: string | undefined
  readonly issuedAt?: number | undefined
  readonly refreshRejected?: boolean | undefined
  /** when the user signed in (seconds since the epoch; since 0.2.0) */
  readonly signedInAt?: number | undefined
  /** when the sign-in ends: the refresh token's end (seconds since the epoch; since 0.2.0) */
  readonly signInEndsAt?: number | undefined
}

/**
 * The JSON form of a {@link TokenInfo} (the secrets in clear: keep it where only your app can read it).
 *
 * @since 1.0.0
 */
export interface TokenInfoJson {
  readonly access_token: string
  readonly expires_at: number
  readonly refresh_token?: string | undefined
  readonly scope?: string | undefined
  readonly client_id?: string | undefined
  readonly auth_url?: string | undefined
  readonly issued_at?: number | undefined
  readonly refresh_rejected?: boolean | undefined
  readonly signed_in_at?: number | undefined
  readonly sign_in_ends_at?: number | undefined
}

/**
 * The JSON form of a token, to keep it in your own store.
 *
 * @since 1.0.0
 */
export const tokenInfoToJson: (token: TokenInfo) => TokenInfoJson = described(Facade.tokenInfoToJson)

/**
 * A token from its JSON form; `undefined` when it is not one.
 *
 * @since 1.0.0
 */
export const tokenInfoFromJson: (json: unknown) => TokenInfo | undefined = Facade.tokenInfoFromJson

/**
 * A token cache: `get` resolves to the token, its JSON form, or `undefined`; `clear` (optional; `signOut` needs it)
 * forgets it.
 *
 * @since 1.0.0
 */
export interface PromiseTokenCache {
  readonly get: () => Promise<TokenInfo | TokenInfoJson | undefined>
  readonly set: (token: TokenInfo) => Promise<void>
  readonly clear?: (() => Promise<void>) | undefined
}

/**
 * A user's token cache (see {@link AsyncUserTokens}).
 *
 * @since 1.0.0
 */
export type PromiseUserTokenCache = PromiseTokenCache

/**
 * A token cache in a file (see {@link fileTokenCache}).
 *
 * @since 1.0.0
 */
export interface FileTokenCache {
  readonly get: () => Promise<TokenInfo | undefined>
  readonly set: (token: TokenInfo) => Promise<void>
  readonly clear: () => Promise<void>
}

/**
 * One token cache per user (see {@link directoryTokenStore}).
 *
 * @since 1.0.0
 */
export type DirectoryTokenStore = (userId: string) => FileTokenCache

/**
 * A token cache in a file: atomic writes, mode 0600, an unreadable file reads as none, shared safely by the
 * processes of one machine (a lock file and compare-and-set). Pass it as `tokenCache`.
 *
 * @since 1.0.0
 */
export const fileTokenCache: (path: string) => FileTokenCache = described(Facade.fileTokenCache)

/**
 * A token cache shared by every tab of one origin in a browser page (Web Locks for the renewal, IndexedDB for the
 * entry): one token request per expiry for all the tabs. Pass it as `tokenCache`. Throws ConfigurationError where
 * the browser lacks Web Locks or IndexedDB (never a cache of one tab), and outside a browser.
 *
 * @since 1.0.0
 */
export interface BrowserTokenCache {
  readonly [browserCache]: true
}
declare const browserCache: unique symbol

/**
 * The token cache of the tabs of one origin (see {@link BrowserTokenCache}); `key` names the entry (default
 * `"default"`), so that two apps of one origin keep theirs apart.
 *
 * @since 1.0.0
 */
export const browserTokenCache: (options?: { readonly key?: string | undefined }) => BrowserTokenCache = described(
  Facade.browserTokenCache
)

/**
 * A token store in a directory: one 0600 file per user in a 0700 directory. Pass it as `store` to {@link AsyncUserTokens}.
 *
 * @since 1.0.0
 */
export const directoryTokenStore: (path: string) => DirectoryTokenStore = described(Facade.directoryTokenStore)

// ---------------------------------------------------------------------------------------------------------------
// Errors

/**
 * An OAuth error body (`{ error, error_description }`).
 *
 * @since 1.0.0
 */
export interface ErrorPayload {
  readonly error: string
  readonly error_description?: string | undefined
  readonly error_uri?: string | undefined
}

/**
 * The base class of every SDK error.
 *
 * @since 1.0.0
 */
export interface ServiceError extends Error {
  readonly _tag:
    | "AuthenticationError"
    | "ConfigurationError"
    | "TransportError"
    | "ApiError"
    | "RateLimitError"
    | "TokenCacheError"
}
/** @since 1.0.0 */
export interface AuthenticationError extends ServiceError {
  readonly _tag: "AuthenticationError"
  readonly status?: number | undefined
  readonly payload?: ErrorPayload | undefined
}
/** @since 1.0.0 */
export interface ConfigurationError extends ServiceError {
  readonly _tag: "ConfigurationError"
}
/** @since 1.0.0 */
export interface TransportError extends ServiceError {
  readonly _tag: "TransportError"
  readonly status?: number | undefined
}
/** @since 1.0.0 */
export interface ApiError extends ServiceError {
  readonly _tag: "ApiError"
  readonly status: number
  readonly payload?: unknown
}
/** @since 1.0.0 */
export interface RateLimitError extends ServiceError {
  readonly _tag: "RateLimitError"
  readonly retryAfter: Duration
}
/** @since 1.0.0 */
export interface TokenCacheError extends ServiceError {
  readonly _tag: "TokenCacheError"
}

interface ErrorClass<E, Args = { readonly message: string }> {
  readonly prototype: E
  new (args: Args): E
}

/**
 * The base class of every SDK error: `error instanceof ServiceError`.
 *
 * @since 1.0.0
 */
export const ServiceError: { readonly prototype: ServiceError } & (abstract new (args: never) => ServiceError) =
  Facade.ServiceError
/**
 * The token endpoint rejected the request, a callback carried an error or a wrong state, or the API still answered
 * 401 after one forced refresh.
 *
 * @since 1.0.0
 */
export const AuthenticationError: ErrorClass<AuthenticationError> = Facade.AuthenticationError
/**
 * Missing, conflicting or invalid options.
 *
 * @since 1.0.0
 */
export const ConfigurationError: ErrorClass<ConfigurationError> = Facade.ConfigurationError
/**
 * The network failed, or the token endpoint kept failing after every retry.
 *
 * @since 1.0.0
 */
export const TransportError: ErrorClass<TransportError> = Facade.TransportError
/**
 * The data API answered with a non-2xx status other than 401 and 429.
 *
 * @since 1.0.0
 */
export const ApiError: ErrorClass<
  ApiError,
  { readonly message: string; readonly status: number; readonly payload?: unknown }
> = Facade.ApiError
/**
 * The data API answered 429 and the retries ran out (or `Retry-After` was too long).
 *
 * @since 1.0.0
 */
export const RateLimitError: { readonly prototype: RateLimitError; new (args: never): RateLimitError } =
  Facade.RateLimitError
/**
 * A token cache (file system, Redis, yours) failed.
 *
 * @since 1.0.0
 */
export const TokenCacheError: ErrorClass<TokenCacheError> = Facade.TokenCacheError

// ---------------------------------------------------------------------------------------------------------------
// Options

/**
 * Options every class takes: the least severe level logged (default `"warning"`), where lines go (default:
 * `console.error`/`console.warn`, stderr; the SDK never writes to stdout), and the `fetch` that sends the requests
 * (default: Node's own; a test's stub answers without a network).
 *
 * @since 1.0.0
 */
export interface LogOptions {
  readonly logLevel?: "none" | "error" | "warning" | "info" | "debug" | undefined
  readonly logger?: Logger | undefined
  readonly fetch?: Fetch | undefined
}

/**
 * The type of `globalThis.fetch` where your project has one (Node's types or the DOM library); no DOM or Node type
 * is needed to compile these declarations.
 *
 * @since 1.0.0
 */
export type Fetch = typeof globalThis extends { readonly fetch: infer F }
  ? F
  : (input: never, init?: never) => Promise<unknown>

/**
 * Where log lines go.
 *
 * @since 1.0.0
 */
export interface Logger {
  readonly error: (line: string) => void
  readonly warn: (line: string) => void
  readonly info: (line: string) => void
  readonly debug: (line: string) => void
}

/**
 * The options of the providers (client id and secret fall back to `SERVICE_SDK_CLIENT_ID`/`SERVICE_SDK_CLIENT_SECRET`).
 *
 * @since 1.0.0
 */
export interface ClientCredentialsOptions extends LogOptions {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | undefined
  readonly scope?: string | ReadonlyArray<string> | undefined
  readonly authUrl?: string | undefined
  readonly tokenCache?: PromiseTokenCache | FileTokenCache | ConnectedRedisTokenCache | BrowserTokenCache | undefined
  /** Per token request (default 30 s). */
  readonly timeout?: DurationInput | undefined
  /** Retries of a token request (default 3). */
  readonly maxRetries?: number | undefined
  /** A token this close to its expiry is renewed (default 30 s). */
  readonly skew?: DurationInput | undefined
  /** Within this long of going stale, the first caller starts a background renewal (default off). */
  readonly refreshAhead?: DurationInput | undefined
}

/** @since 1.0.0 */
export interface AuthorizationCodeOptions extends ClientCredentialsOptions {
  /** `https`, or `http` on 127.0.0.1 or [::1] (never `localhost`); a loopback URI may have no port. */
  readonly redirectUri?: string | undefined
  /** The issuer a callback's `iss` must name (RFC 9207; default `authUrl` without a trailing slash; since 0.2.0). */
  readonly issuer?: string | undefined
  /** Refuse a callback without `iss` (RFC 9207 §2.4; default false). */
  readonly requireIss?: boolean | undefined
  /** How long a sign-in lasts when the server does not say (the Service: `"180 days"`; since 0.2.0). */
  readonly refreshTokenLifetime?: DurationInput | undefined
  readonly refreshToken?: string | undefined
  /** An app that keeps no secret (signs in with PKCE only). */
  readonly publicClient?: boolean | undefined
}

/** @since 1.0.0 */
export interface AuthorizationUrlOptions {
  readonly state?: string | undefined
  readonly scope?: string | ReadonlyArray<string> | undefined
  readonly showDialog?: boolean | undefined
  readonly codeChallenge?: string | undefined
  /** The user to preselect on the consent page (`login_hint`). */
  readonly loginHint?: string | undefined
}

/** @since 1.0.0 */
export interface BeginAuthorizationOptions extends Omit<AuthorizationUrlOptions, "codeChallenge"> {
  /** The sign-in's own redirect URI instead of the configured one (a loopback URI with the port it listens on). */
  readonly redirectUri?: string | undefined
}

/**
 * A sign-in in progress: send the user to `url`; keep `state` and `codeVerifier` server-side until the callback.
 *
 * @since 1.0.0
 */
export interface PendingAuthorization {
  readonly url: string
  readonly state: string
  readonly codeVerifier: Secret
  /** the sign-in's own redirect URI, when it is not the configured one (since 0.2.0) */
  readonly redirectUri?: string | undefined
}

/** @since 1.0.0 */
export interface AuthorizeLocalOptions extends Omit<AuthorizationUrlOptions, "codeChallenge"> {
  /** How long to wait for the callback (default 300 s). */
  readonly timeout?: DurationInput | undefined
  /** Open the system browser (default true). */
  readonly openBrowser?: boolean | undefined
  readonly onAuthorizationUrl?: ((url: string) => void | PromiseLike<void>) | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Providers

/**
 * What every provider has.
 *
 * @since 1.0.0
 */
export interface AsyncTokenProvider {
  /** A valid access token (a cached one without a request; one request however many callers wait). */
  getAccessToken(): Promise<string>
  /** After the API rejected `rejected` with 401: a fresh token. */
  forceRefresh(rejected: string): Promise<string>
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** @since 1.0.0 */
export const AsyncTokenProvider: { readonly prototype: AsyncTokenProvider; new (source: never): AsyncTokenProvider } =
  described(Facade.AsyncTokenProvider)

/**
 * App-only tokens (client credentials), cached and renewed.
 *
 * @since 1.0.0
 */
export interface AsyncClientCredentials extends AsyncTokenProvider {}

/** @since 1.0.0 */
export const AsyncClientCredentials: {
  readonly prototype: AsyncClientCredentials
  new (options?: ClientCredentialsOptions): AsyncClientCredentials
} = described(Facade.AsyncClientCredentials)

/**
 * User tokens (authorization code with refresh token, PKCE).
 *
 * @since 1.0.0
 */
export interface AsyncAuthorizationCode extends AsyncTokenProvider {
  getAuthorizationUrl(options?: AuthorizationUrlOptions): string
  exchangeCode(code: string, options?: { readonly codeVerifier?: string | Secret | undefined }): Promise<TokenInfo>
  readonly publicClient: boolean
  beginAuthorization(options?: BeginAuthorizationOptions): Promise<PendingAuthorization>
  completeAuthorization(
    callbackUrl: string,
    pending: { readonly state: string; readonly codeVerifier: string | Secret }
  ): Promise<TokenInfo>
  authorizeLocal(options?: AuthorizeLocalOptions): Promise<TokenInfo>
  /** When the user's sign-in ends, or undefined when nothing says (since 0.2.0). */
  signInEndsAt(): Promise<Date | undefined>
}

/** @since 1.0.0 */
export const AsyncAuthorizationCode: {
  readonly prototype: AsyncAuthorizationCode
  new (options?: AuthorizationCodeOptions): AsyncAuthorizationCode
  /** The code of a redirect URL; throws AuthenticationError (state checked first). */
  parseResponseUrl(
    url: string,
    options?: { readonly expectedState?: string | undefined; readonly issuer?: string | undefined }
  ): string
} = described(Facade.AsyncAuthorizationCode)

/**
 * Runs the sign-in on a loopback server (`provider.authorizeLocal(options)`).
 *
 * @since 1.0.0
 */
export const asyncAuthorizeLocal: (
  provider: AsyncAuthorizationCode,
  options?: AuthorizeLocalOptions
) => Promise<TokenInfo> = described(Facade.asyncAuthorizeLocal)

/**
 * One user's tokens, as an `authProvider` (from {@link AsyncUserTokens.forUser}).
 *
 * @since 1.0.0
 */
export interface AsyncUserTokenProvider extends AsyncTokenProvider {}

/** @since 1.0.0 */
export const AsyncUserTokenProvider: {
  readonly prototype: AsyncUserTokenProvider
  new (source: never): AsyncUserTokenProvider
} = described(Facade.AsyncUserTokenProvider)

/** @since 1.0.0 */
export interface AsyncUserTokensOptions
  extends Omit<AuthorizationCodeOptions, "tokenCache" | "refreshToken" | "refreshAhead"> {
  readonly store: ((userId: string) => PromiseTokenCache | FileTokenCache) | ConnectedRedisTokenStore
  /** A user's in-memory state is dropped after this long without use (default 5 minutes). */
  readonly idleTimeToLive?: DurationInput | undefined
}

/**
 * Many users' tokens (a web app).
 *
 * @since 1.0.0
 */
export interface AsyncUserTokens {
  forUser(userId: string): AsyncUserTokenProvider
  getAccessToken(userId: string): Promise<string>
  signIn(userId: string, token: TokenInfo): Promise<void>
  signOut(userId: string): Promise<void>
  /** When the user's sign-in ends, or undefined when unknown (since 0.2.0). */
  signInEndsAt(userId: string): Promise<Date | undefined>
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** @since 1.0.0 */
export const AsyncUserTokens: {
  readonly prototype: AsyncUserTokens
  new (options: AsyncUserTokensOptions): AsyncUserTokens
} = described(Facade.AsyncUserTokens)

// ---------------------------------------------------------------------------------------------------------------
// The data API client

/** @since 1.0.0 */
export interface ArtistRef {
  /** `null` for the artist of a local file */
  readonly id: string | null
  readonly name: string
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface AlbumRef {
  /** `null` for the album of a local file */
  readonly id: string | null
  readonly name: string
  readonly release_date?: string | null | undefined
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface AlbumTrack {
  /** `null` for a local file */
  readonly id: string | null
  readonly name: string
  readonly duration_ms: number
  readonly track_number?: number | null | undefined
  readonly artists?: ReadonlyArray<ArtistRef> | null | undefined
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface Album {
  readonly id: string
  readonly name: string
  readonly artists: ReadonlyArray<ArtistRef>
  readonly tracks: { readonly items: ReadonlyArray<AlbumTrack>; readonly total?: number | null | undefined }
  readonly release_date?: string | null | undefined
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface User {
  readonly id: string
  readonly display_name: string | null
  readonly email?: string | null | undefined
  readonly country?: string | null | undefined
  readonly product?: string | null | undefined
}
/** @since 1.0.0 */
export interface Track {
  /** `null` for a local file (`is_local: true`) */
  readonly id: string | null
  readonly name: string
  readonly artists: ReadonlyArray<ArtistRef>
  readonly duration_ms: number
  readonly album?: AlbumRef | null | undefined
  readonly track_number?: number | null | undefined
  readonly is_local?: boolean | null | undefined
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface SavedTrack {
  readonly added_at: string
  readonly track: Track
}
/** @since 1.0.0 */
export interface Paging<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly next?: string | null | undefined
}
/** @since 1.0.0 */
export interface Artist {
  readonly id: string
  readonly name: string
  readonly genres?: ReadonlyArray<string> | null | undefined
  readonly followers?: { readonly total: number } | null | undefined
  readonly popularity?: number | null | undefined
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface FollowedArtists {
  readonly artists: {
    readonly items: ReadonlyArray<Artist>
    readonly cursors?:
      | { readonly after?: string | null | undefined; readonly before?: string | null | undefined }
      | null
      | undefined
    readonly total: number
    readonly limit?: number | null | undefined
    readonly next?: string | null | undefined
  }
}
/** @since 1.0.0 */
export interface Device {
  readonly id?: string | null | undefined
  readonly name: string
  readonly type?: string | null | undefined
  readonly is_active?: boolean | null | undefined
  readonly volume_percent?: number | null | undefined
}
/** @since 1.0.0 */
export interface PlaybackItem {
  /** `null` for a local file (`is_local: true`) */
  readonly id: string | null
  readonly name: string
  /** `track` or `episode` (an episode has no artists or album) */
  readonly type?: string | null | undefined
  readonly duration_ms?: number | null | undefined
  readonly artists?: ReadonlyArray<ArtistRef> | null | undefined
  readonly album?: AlbumRef | null | undefined
  readonly is_local?: boolean | null | undefined
  readonly uri?: string | null | undefined
}
/** @since 1.0.0 */
export interface PlaybackState {
  readonly is_playing: boolean
  readonly progress_ms?: number | null | undefined
  /** absent for an ad (`currently_playing_type: "ad"`) */
  readonly item?: PlaybackItem | null | undefined
  readonly currently_playing_type?: string | null | undefined
  readonly device?: Device | null | undefined
  readonly shuffle_state?: boolean | null | undefined
  readonly repeat_state?: string | null | undefined
  readonly timestamp?: number | null | undefined
}
/** @since 1.0.0 */
export interface PlaylistSnapshot {
  readonly snapshot_id: string
}

/**
 * Exactly one token source: `accessToken`, `authProvider`, or `clientId`/`clientSecret` (either may come from the
 * environment); the provider options apply to the provider the client creates.
 *
 * @since 1.0.0
 */
export interface AsyncServiceClientOptions extends ClientCredentialsOptions {
  readonly accessToken?: string | undefined
  readonly authProvider?: AsyncTokenProvider | undefined
  /** Default `SERVICE_SDK_API_URL`, then `https://api.service.example/v1`. */
  readonly apiUrl?: string | undefined
  /** The longest `Retry-After` worth waiting for (default 60 s). */
  readonly maxRetryAfter?: DurationInput | undefined
}

/** @since 1.0.0 */
export type Query = Readonly<
  Record<string, string | number | boolean | ReadonlyArray<string | number | boolean> | null | undefined>
>

/**
 * The data API client: the bearer token on every request, safe retries, `Retry-After`, one forced refresh on 401.
 *
 * @since 1.0.0
 */
export interface AsyncServiceClient {
  request<A = unknown>(
    method: "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "HEAD" | "OPTIONS",
    path: string,
    options?: { readonly query?: Query | undefined; readonly body?: unknown }
  ): Promise<A>
  readonly users: { readonly me: () => Promise<User> }
  readonly albums: { readonly get: (id: string) => Promise<Album> }
  readonly library: {
    readonly savedTracks: (options?: {
      readonly limit?: number | undefined
      readonly offset?: number | undefined
    }) => Promise<Paging<SavedTrack>>
    readonly saveTracks: (ids: ReadonlyArray<string>) => Promise<void>
  }
  readonly follows: {
    readonly followedArtists: (options?: {
      readonly limit?: number | undefined
      readonly after?: string | undefined
    }) => Promise<FollowedArtists>
  }
  readonly player: { readonly playbackState: () => Promise<PlaybackState | undefined> }
  readonly playlists: { readonly addItems: (id: string, uris: ReadonlyArray<string>) => Promise<PlaylistSnapshot> }
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** @since 1.0.0 */
export const AsyncServiceClient: {
  readonly prototype: AsyncServiceClient
  new (options?: AsyncServiceClientOptions): AsyncServiceClient
  fromClientCredentials(options?: Omit<AsyncServiceClientOptions, "accessToken" | "authProvider">): AsyncServiceClient
} = described(Facade.AsyncServiceClient)

// ---------------------------------------------------------------------------------------------------------------
// Redis (`@service-sdk/redis`, bundled; `ioredis` is your app's own)

/**
 * The options of {@link RedisTokenCache.connect}: your `ioredis` (5.x) client, or a `url` (then `ioredis` must be
 * installed in your app), and the key of the shared token.
 *
 * @since 1.0.0
 */
export interface RedisTokenCacheOptions {
  /** Your ioredis `Redis` or `Cluster` client, used as is and never closed by the cache. Give this or `url`. */
  readonly client?: object | undefined
  /** `redis://[:password@]host:port[/db]` or `rediss://…` (default `redis://127.0.0.1:6379`). */
  readonly url?: string | undefined
  /** The key of the shared token, e.g. `service-sdk:token:<clientId>`; the lock is `<key>:lock`. */
  readonly key: string
  readonly lockTtl?: DurationInput | undefined
  readonly lockWait?: DurationInput | undefined
  readonly pollInterval?: DurationInput | undefined
  readonly commandTimeout?: DurationInput | undefined
  /**
   * What the cache logs when it connects (a warning when the server may evict its keys) goes here at or above
   * `logLevel` (default `"warning"`, on stderr with `console.warn`): never to stdout.
   */
  readonly logLevel?: LogOptions["logLevel"]
  readonly logger?: Logger | undefined
}

/**
 * The options of {@link RedisTokenStore.connect}: those of the cache, with a `prefix` for every user's key.
 *
 * @since 1.0.0
 */
export interface RedisTokenStoreOptions extends Omit<RedisTokenCacheOptions, "key"> {
  readonly prefix: string
}

/**
 * A token cache in Redis, shared by a fleet (one token request per expiry for every process): pass it as
 * `tokenCache`; `close()` closes the connection it opened (not your `client`).
 *
 * @since 1.0.0
 */
export interface ConnectedRedisTokenCache {
  readonly close: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * One Redis token cache per user: pass it as `store` to {@link AsyncUserTokens}.
 *
 * @since 1.0.0
 */
export interface ConnectedRedisTokenStore {
  (userId: string): object
  readonly close: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * `@service-sdk/redis`'s `RedisTokenCache` for this package (the same code, on this package's runtime): rejects
 * with ConfigurationError or TokenCacheError.
 *
 * @since 1.0.0
 */
export const RedisTokenCache: {
  readonly connect: (options: RedisTokenCacheOptions) => Promise<ConnectedRedisTokenCache>
} = {
  connect: async (options) => {
    const { RedisTokenCache } = await import("../../effect4/redis/src/index.js")
    const { logLevel, logger, ...rest } = options ?? ({} as RedisTokenCacheOptions)
    const { close, value } = await startScoped(RedisTokenCache.make(described(rest)), { logLevel, logger })
    return described({ ...value, close, [Symbol.asyncDispose]: close })
  }
}

/**
 * `@service-sdk/redis`'s `RedisTokenStore` for this package (the same code, on this package's runtime).
 *
 * @since 1.0.0
 */
export const RedisTokenStore: {
  readonly connect: (options: RedisTokenStoreOptions) => Promise<ConnectedRedisTokenStore>
} = {
  connect: async (options) => {
    const { RedisTokenStore } = await import("../../effect4/redis/src/index.js")
    const { logLevel, logger, ...rest } = options ?? ({} as RedisTokenStoreOptions)
    const { close, value } = await startScoped(RedisTokenStore.make(described(rest)), { logLevel, logger })
    return described(Object.assign((userId: string) => value(userId), { close, [Symbol.asyncDispose]: close }))
  }
}
