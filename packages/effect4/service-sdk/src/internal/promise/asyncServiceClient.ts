/**
 * `ServiceClient` for plain code: Promise methods over the same Effect client, on exactly one token source.
 */
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Request from "../client/request.js"
import type * as Schemas from "../client/schemas.js"
import {
  type Options as ServiceClientOptions,
  type RequestOptions,
  ServiceClient,
  type Service as ServiceClientService
} from "../../ServiceClient.js"
import { ConfigurationError } from "../../ServiceError.js"
import { ENV, optionalBoolean, optionalScope, optionalSecret, optionalString, secretValue } from "../config.js"
import type { AsyncOptions, AsyncTokenProvider, ClientCredentialsOptions } from "./asyncProviders.js"
import type { AsyncUserTokenProvider } from "./asyncUserTokens.js"
import * as Runtime from "./runtime.js"
import { sourceOf } from "./tokenSource.js"

/**
 * Exactly one token source: `accessToken` (a fixed token), `authProvider` (an `AsyncClientCredentials` or
 * `AsyncAuthorizationCode`, shared and not closed by the client; it logs to its own `logger`), or
 * `clientId`/`clientSecret` (a client credentials provider the client owns; either falls back to
 * `SERVICE_SDK_CLIENT_ID`/`SERVICE_SDK_CLIENT_SECRET`, and with none of the three given the environment is the
 * source). The client credentials options (`scope`, `authUrl`, `tokenCache`, `skew`) apply to the provider the client
 * creates.
 *
 * @since 2.0.0
 */
export interface AsyncServiceClientOptions extends ServiceClientOptions, AsyncOptions<ClientCredentialsOptions> {
  readonly accessToken?: string | Redacted.Redacted<string> | undefined
  readonly authProvider?: AsyncTokenProvider | AsyncUserTokenProvider | undefined
}

/**
 * Options of {@link AsyncServiceClient.fromClientCredentials}.
 *
 * @since 2.0.0
 */
export type AsyncClientCredentialsClientOptions = Omit<AsyncServiceClientOptions, "accessToken" | "authProvider">

const given = (value: string | Redacted.Redacted<string> | undefined) => (secretValue(value) ?? "").trim() !== ""

/** Plain-JS misuse of the provider options is a ConfigurationError naming the option, not a TypeError further in. */
const checkProviderOptions = (options: AsyncServiceClientOptions) =>
  Effect.all(
    [
      optionalSecret(options.accessToken, "accessToken"),
      options.authProvider === undefined || sourceOf(options.authProvider) !== undefined
        ? Effect.void
        : Effect.fail(
            new ConfigurationError({
              message:
                "authProvider must be an AsyncClientCredentials, AsyncAuthorizationCode or another facade provider"
            })
          ),
      optionalString(options.clientId, "clientId"),
      optionalSecret(options.clientSecret, "clientSecret"),
      optionalScope(options.scope, "scope"),
      optionalString(options.authUrl, "authUrl"),
      optionalBoolean((options as { readonly publicClient?: unknown }).publicClient, "publicClient")
    ],
    { discard: true }
  )

/** The one token source of the options, or a ConfigurationError naming the conflict. */
const tokenLayer = (
  options: AsyncServiceClientOptions
): Layer.Layer<ServiceClient, ConfigurationError, HttpClient.HttpClient> => {
  const invalid = Effect.runSyncExit(checkProviderOptions(options))
  if (invalid._tag === "Failure") {
    return Layer.effect(ServiceClient, Effect.failCause(invalid.cause))
  }
  const sources = [
    given(options.accessToken) ? "accessToken" : undefined,
    options.authProvider !== undefined ? "authProvider" : undefined,
    given(options.clientId) || given(options.clientSecret) ? "clientId/clientSecret" : undefined
  ].filter((source) => source !== undefined)
  if (sources.length > 1) {
    return Layer.effect(
      ServiceClient,
      Effect.fail(
        new ConfigurationError({
          message: `conflicting credentials: pass exactly one of accessToken, authProvider or clientId/clientSecret (got ${sources.join(" and ")})`
        })
      )
    )
  }
  if (options.accessToken !== undefined && sources[0] === "accessToken") {
    return ServiceClient.layerAccessToken(options.accessToken, options)
  }
  if (options.authProvider !== undefined) {
    const source = sourceOf(options.authProvider)!
    return Layer.effect(ServiceClient, ServiceClient.makeWith(source.shared, options))
  }
  const layer = ServiceClient.layerClientCredentials({
    ...options,
    tokenCache: Runtime.toTokenCache(options.tokenCache, "tokenCache", Runtime.cacheTimeout(options.timeout))
  })
  // "no credentials" only when credentials are what is missing: any other problem (a malformed authUrl with the
  // credentials in the environment) is said first, as it is (issue 42 item 16)
  return sources.length === 1
    ? layer
    : Layer.catchTag(layer, "ConfigurationError", (error) =>
        Layer.effect(
          ServiceClient,
          Effect.fail(
            /^missing client(?:Id|Secret)\b/.test(error.message)
              ? new ConfigurationError({
                  message: `no credentials: pass accessToken, authProvider, or clientId and clientSecret (or set ${ENV.clientId} and ${ENV.clientSecret}); ${error.message}`
                })
              : error
          )
        )
      )
}

/**
 * The data API client for plain code, with exactly one of `{ accessToken }`, `{ authProvider }` or
 * `{ clientId, clientSecret }`:
 *
 * @example
 * ```ts
 * await using client = new AsyncServiceClient({ clientId, clientSecret })
 * const album = await client.albums.get("6akEvsycLGftJxYudPjmqK")
 * ```
 *
 * Rejections are the SDK's error instances (`ApiError`, `RateLimitError`, `AuthenticationError`, ...).
 *
 * @since 2.0.0
 */
export class AsyncServiceClient {
  readonly #runtime: Runtime.FacadeRuntime<ServiceClient>
  readonly #client: ServiceClientService
  readonly #authProvider: AsyncTokenProvider | AsyncUserTokenProvider | undefined

  /** Throws ConfigurationError on conflicting, missing or invalid options. */
  constructor(options: AsyncServiceClientOptions = {}) {
    const { client, runtime, checked } = Runtime.guard("AsyncServiceClient", () => {
      const checked = Runtime.checkOptions("AsyncServiceClient", options)
      const runtime = new Runtime.FacadeRuntime(
        "AsyncServiceClient",
        Runtime.provideHttpClient(tokenLayer(checked), checked),
        Runtime.surroundings(checked)
      )
      return { checked, runtime, client: runtime.runSync(ServiceClient) }
    })
    this.#authProvider = checked.authProvider
    this.#runtime = runtime
    this.#client = client
  }

  /**
   * A client on its own client credentials provider; `clientId` and `clientSecret` fall back to the environment.
   *
   * @since 2.0.0
   */
  static fromClientCredentials(options: AsyncClientCredentialsClientOptions = {}): AsyncServiceClient {
    return new AsyncServiceClient(options)
  }

  #run<A>(use: (client: ServiceClientService) => Effect.Effect<A, unknown>): Promise<A> {
    if (this.#authProvider !== undefined && sourceOf(this.#authProvider)?.runtime.closed === true) {
      return Promise.reject(
        new ConfigurationError({ message: "the authProvider of this AsyncServiceClient is closed" })
      )
    }
    return this.#runtime.run(Effect.suspend(() => use(this.#client)))
  }

  /** A JSON request under `apiUrl` (see `ServiceClient.request`); an empty answer (204) resolves to `undefined`. */
  request<A = unknown>(method: Request.HttpMethod, path: string, options?: RequestOptions<A>): Promise<A> {
    return this.#run((client) => client.request(method, path, Runtime.methodOptions("request", options)))
  }

  /** @since 2.0.0 */
  readonly users = {
    /** `GET /me` */
    me: (): Promise<Schemas.User> => this.#run((client) => client.users.me)
  }

  /** @since 2.0.0 */
  readonly albums = {
    /** `GET /albums/{id}` */
    get: (id: string): Promise<Schemas.Album> => this.#run((client) => client.albums.get(id))
  }

  /** @since 2.0.0 */
  readonly library = {
    /** `GET /me/tracks` */
    savedTracks: (options?: {
      readonly limit?: number | undefined
      readonly offset?: number | undefined
    }): Promise<Schemas.SavedTracksPage> =>
      this.#run((client) => client.library.savedTracks(Runtime.methodOptions("savedTracks", options))),
    /** `PUT /me/tracks?ids=..`; an empty list sends nothing. */
    saveTracks: (ids: ReadonlyArray<string>): Promise<void> => this.#run((client) => client.library.saveTracks(ids))
  }

  /** @since 2.0.0 */
  readonly follows = {
    /** `GET /me/following?type=artist` */
    followedArtists: (options?: {
      readonly limit?: number | undefined
      readonly after?: string | undefined
    }): Promise<Schemas.FollowedArtists> =>
      this.#run((client) => client.follows.followedArtists(Runtime.methodOptions("followedArtists", options)))
  }

  /** @since 2.0.0 */
  readonly player = {
    /** `GET /me/player`; `undefined` when nothing is playing (204). */
    playbackState: (): Promise<Schemas.PlaybackState | undefined> =>
      this.#run((client) => Effect.map(client.player.playbackState, Option.getOrUndefined))
  }

  /** @since 2.0.0 */
  readonly playlists = {
    /** `POST /playlists/{id}/items` with `{"uris": [...]}` */
    addItems: (id: string, uris: ReadonlyArray<string>): Promise<Schemas.PlaylistSnapshot> =>
      this.#run((client) => client.playlists.addItems(id, uris))
  }

  /** Releases the client's connections, and the provider it created (not an `authProvider` passed in). */
  close(): Promise<void> {
    return this.#runtime.close()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }
}
