/**
 * The authenticated client of the Service's data API: the bearer token on every request, retries of what is safe to
 * retry, `Retry-After` honoured, one forced token refresh on a 401, and typed resources.
 *
 * @since 1.0.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ClientCredentials } from "./ClientCredentials.js"
import { dual } from "effect/Function"
import type * as Request from "./internal/client/request.js"
import type * as Schemas from "./internal/client/schemas.js"
import * as Service from "./internal/client/service.js"
import { isVisibleAscii } from "@service-sdk/shared/redact"
import {
  type ApiError,
  type AuthenticationError,
  ConfigurationError,
  type RateLimitError,
  type TokenCacheError,
  type TransportError
} from "./ServiceError.js"
import { TokenProvider, type TokenProviderService } from "./TokenProvider.js"
import { UserTokens } from "./UserTokens.js"

/**
 * `apiUrl` falls back to `SERVICE_SDK_API_URL` and then `https://api.service.example/v1`.
 *
 * @since 1.0.0
 * @category options
 */
export interface ServiceClientOptions {
  readonly apiUrl?: string | undefined
  /** Per attempt (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries after the first attempt, for transport errors, 5xx and 429 (default 3). */
  readonly maxRetries?: number | undefined
  /** The longest `Retry-After` worth waiting for; a longer one fails at once with RateLimitError (default 60 s). */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
}

/**
 * What `http` fails with: the outcomes of the request policy (a 5xx that outlasts the retries is returned as the
 * response, not failed).
 *
 * @since 1.0.0
 * @category errors
 */
export type ServiceClientHttpError = AuthenticationError | RateLimitError | TransportError | TokenCacheError

/**
 * What `request` and the resources fail with.
 *
 * @since 1.0.0
 * @category errors
 */
export type ServiceClientError = ApiError | ServiceClientHttpError

/**
 * @since 1.0.0
 * @category options
 */
export type RequestOptions<A> = Request.RequestOptions<A>

/**
 * @since 1.0.0
 * @category models
 */
export type Query = Request.Query

/**
 * @since 1.0.0
 * @category models
 */
export interface Users {
  /** `GET /me` */
  readonly me: Effect.Effect<Schemas.User, ServiceClientError>
}

/**
 * @since 1.0.0
 * @category models
 */
export interface Albums {
  /** `GET /albums/{id}` */
  readonly get: (id: string) => Effect.Effect<Schemas.Album, ServiceClientError>
}

/**
 * @since 1.0.0
 * @category models
 */
export interface Library {
  /** `GET /me/tracks?limit=..&offset=..` */
  readonly savedTracks: (options?: {
    readonly limit?: number | undefined
    readonly offset?: number | undefined
  }) => Effect.Effect<Schemas.Paging<Schemas.SavedTrack>, ServiceClientError>
  /** `PUT /me/tracks?ids=a,b`; an empty list sends nothing. */
  readonly saveTracks: (ids: ReadonlyArray<string>) => Effect.Effect<void, ServiceClientError>
}

/**
 * @since 1.0.0
 * @category models
 */
export interface Follows {
  /** `GET /me/following?type=artist&limit=..&after=..` */
  readonly followedArtists: (options?: {
    readonly limit?: number | undefined
    readonly after?: string | undefined
  }) => Effect.Effect<Schemas.FollowedArtists, ServiceClientError>
}

/**
 * @since 1.0.0
 * @category models
 */
export interface Player {
  /** `GET /me/player`; none when nothing is playing (204 or an empty 200). */
  readonly playbackState: Effect.Effect<Option.Option<Schemas.PlaybackState>, ServiceClientError>
}

/**
 * @since 1.0.0
 * @category models
 */
export interface Playlists {
  /** `POST /playlists/{id}/items` with `{"uris": [...]}` (201). Not retried on 5xx: adding twice adds twice. */
  readonly addItems: (
    id: string,
    uris: ReadonlyArray<string>
  ) => Effect.Effect<Schemas.PlaylistSnapshot, ServiceClientError>
}

/**
 * @since 1.0.0
 * @category models
 */
export interface ServiceClientResources {
  readonly users: Users
  readonly albums: Albums
  readonly library: Library
  readonly follows: Follows
  readonly player: Player
  readonly playlists: Playlists
}

/**
 * What `ServiceClient` provides: the authenticated `http` client, `request` for any endpoint, and the typed resources.
 *
 * @since 1.0.0
 * @category models
 */
export interface ServiceClientService extends ServiceClientResources {
  /**
   * An `HttpClient` under `apiUrl` (relative paths such as `/me`), authenticated, with the request policy: retries,
   * `Retry-After`, one refresh on 401. Other statuses come back as responses.
   */
  readonly http: HttpClient.HttpClient.With<ServiceClientHttpError>
  /**
   * A JSON request: `query` parameters, a JSON `body`, and the answer decoded as JSON and through `schema` when given
   * (an empty answer such as 204 is `undefined`). Non-2xx answers fail with ApiError.
   */
  readonly request: <A = unknown>(
    method: HttpMethod.HttpMethod,
    path: string,
    options?: RequestOptions<A>
  ) => Effect.Effect<A, ServiceClientError>
  /**
   * The same client (options, `HttpClient`, request policy) calling with another provider's tokens: what
   * `ServiceClient.withTokenProvider` and `ServiceClient.forUser` use. A hand-made client (a test double) declares
   * it too.
   *
   * @since 1.0.0
   */
  readonly withTokenProvider: (provider: TokenProviderService) => ServiceClientService
}

/**
 * The data API client: the bearer token on every request, retries, `Retry-After`, one forced refresh on a 401, and
 * typed resources. Its layers need a `TokenProvider` (or a fixed token) and an `HttpClient`.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { AuthorizationCode, ServiceClient } from "@service-sdk/effect"
 *
 * const UserClient = ServiceClient.layer().pipe(
 *   Layer.provide(AuthorizationCode.layer({ refreshToken: process.env.MY_APP_REFRESH_TOKEN })),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * const me = Effect.flatMap(ServiceClient, (client) => client.users.me).pipe(Effect.provide(UserClient))
 * ```
 *
 * @since 1.0.0
 * @category tags
 */
export class ServiceClient extends Context.Tag("service-sdk/ServiceClient")<ServiceClient, ServiceClientService>() {
  /**
   * A client on the `TokenProvider` in context. Fails with ConfigurationError on an invalid option or
   * `SERVICE_SDK_API_URL`.
   *
   * @since 1.0.0
   */
  static make(
    options: ServiceClientOptions = {}
  ): Effect.Effect<ServiceClientService, ConfigurationError, TokenProvider | HttpClient.HttpClient> {
    return Effect.flatMap(TokenProvider, (provider) => ServiceClient.makeWith(provider, options))
  }

  /**
   * A client on the given token provider (no `TokenProvider` in context needed): e.g. one user's
   * `UserTokens.provider(userId)`, or a provider of your own. Fails with ConfigurationError on an invalid option.
   *
   * @example
   * ```ts
   * import { NodeHttpClient } from "@effect/platform-node"
   * import { Effect } from "effect"
   * import { ServiceClient, TokenProvider } from "@service-sdk/effect"
   *
   * const me = Effect.gen(function* () {
   *   const client = yield* ServiceClient.makeWith(TokenProvider.static(process.env.MY_TOKEN ?? ""))
   *   return yield* client.users.me
   * }).pipe(Effect.provide(NodeHttpClient.layerUndici))
   * ```
   *
   * @since 1.0.0
   */
  static makeWith(
    provider: TokenProviderService,
    options: ServiceClientOptions = {}
  ): Effect.Effect<ServiceClientService, ConfigurationError, HttpClient.HttpClient> {
    return typeof provider?.getAccessToken !== "object" || typeof provider.forceRefresh !== "function"
      ? Effect.fail(
          new ConfigurationError({
            message: "ServiceClient.makeWith needs a TokenProvider service (getAccessToken and forceRefresh)"
          })
        )
      : Service.make(options, provider)
  }

  /**
   * A layer of {@link ServiceClient.make}. Fails with ConfigurationError on an invalid option (or
   * `SERVICE_SDK_API_URL`).
   *
   * @since 1.0.0
   */
  static layer(
    options: ServiceClientOptions = {}
  ): Layer.Layer<ServiceClient, ConfigurationError, TokenProvider | HttpClient.HttpClient> {
    return Layer.effect(ServiceClient, ServiceClient.make(options))
  }

  /**
   * A client on one fixed access token: no provider, and a 401 is final (AuthenticationError). Fails with
   * ConfigurationError for an empty token, a token that is not visible ASCII (RFC 6750 §2.1: it could not go in a
   * header as is), or an invalid option.
   *
   * @since 1.0.0
   */
  static layerAccessToken(
    token: string | Redacted.Redacted<string>,
    options: ServiceClientOptions = {}
  ): Layer.Layer<ServiceClient, ConfigurationError, HttpClient.HttpClient> {
    return Layer.effect(
      ServiceClient,
      Effect.flatMap(checkAccessToken(token), (accessToken) =>
        Service.make(options, { getAccessToken: Effect.succeed(accessToken) })
      )
    )
  }

  /**
   * A client on its own `ClientCredentials` provider; the options are those of both (`timeout` and `maxRetries`
   * apply to token and data API calls alike).
   *
   * @since 1.0.0
   */
  static layerClientCredentials(
    options: ClientCredentials.Options & ServiceClientOptions = {}
  ): Layer.Layer<ServiceClient, ConfigurationError, HttpClient.HttpClient> {
    return Layer.effect(ServiceClient, ServiceClient.make(options)).pipe(
      Layer.provide(ClientCredentials.layer(options))
    )
  }

  /**
   * The same client (options, `HttpClient`, request policy) calling with `provider`'s tokens. Pipeable:
   * `client.pipe(ServiceClient.withTokenProvider(provider))` or `ServiceClient.withTokenProvider(client, provider)`.
   *
   * @since 1.0.0
   */
  static readonly withTokenProvider: {
    (provider: TokenProviderService): (client: ServiceClientService) => ServiceClientService
    (client: ServiceClientService, provider: TokenProviderService): ServiceClientService
  } = dual(2, (client: ServiceClientService, provider: TokenProviderService) => client.withTokenProvider(provider))

  /**
   * The client in context, with its options and policy (retries, `Retry-After`, 401 → one forced refresh), calling
   * with one user's bearer from `UserTokens`: a 401 renews only that user's token.
   *
   * @since 1.0.0
   */
  static forUser(userId: string): Effect.Effect<ServiceClientService, never, UserTokens | ServiceClient> {
    return Effect.map(Effect.zip(UserTokens, ServiceClient), ([users, client]) =>
      ServiceClient.withTokenProvider(client, users.provider(userId))
    )
  }
}

/** A user-given access token: non-empty visible ASCII (RFC 6750 §2.1), else a ConfigurationError. */
const checkAccessToken = (
  token: string | Redacted.Redacted<string>
): Effect.Effect<Redacted.Redacted<string>, ConfigurationError> => {
  const value = Redacted.isRedacted(token) ? Redacted.value(token) : token
  if (typeof value !== "string" || value.trim() === "") {
    return Effect.fail(new ConfigurationError({ message: "the access token is empty" }))
  }
  if (!isVisibleAscii(value)) {
    return Effect.fail(
      new ConfigurationError({
        message:
          "the access token holds characters a bearer token cannot (only visible ASCII, RFC 6750 §2.1: no spaces, control characters or non-ASCII)"
      })
    )
  }
  return Effect.succeed(Redacted.isRedacted(token) ? token : Redacted.make(value))
}

/**
 * @since 1.0.0
 */
export declare namespace ServiceClient {
  /** @since 1.0.0 */
  export type Service = ServiceClientService
  /** @since 1.0.0 */
  export type Options = ServiceClientOptions
  /** @since 1.0.0 */
  export type User = Schemas.User
  /** @since 1.0.0 */
  export type Album = Schemas.Album
  /** @since 1.0.0 */
  export type AlbumTrack = Schemas.AlbumTrack
  /** @since 1.0.0 */
  export type ArtistRef = Schemas.ArtistRef
  /** @since 1.0.0 */
  export type AlbumRef = Schemas.AlbumRef
  /** @since 1.0.0 */
  export type Track = Schemas.Track
  /** @since 1.0.0 */
  export type SavedTrack = Schemas.SavedTrack
  /** @since 1.0.0 */
  export type Paging<A> = Schemas.Paging<A>
  /** @since 1.0.0 */
  export type Artist = Schemas.Artist
  /** @since 1.0.0 */
  export type FollowedArtists = Schemas.FollowedArtists
  /** @since 1.0.0 */
  export type PlaybackState = Schemas.PlaybackState
  /** @since 1.0.0 */
  export type PlaybackItem = Schemas.PlaybackItem
  /** @since 1.0.0 */
  export type Device = Schemas.Device
  /** @since 1.0.0 */
  export type PlaylistSnapshot = Schemas.PlaylistSnapshot
}
