/**
 * The data API client: every request carries a bearer token from a `TokenProvider`, retries what is safe to retry,
 * honours `Retry-After`, and on a 401 forces one token refresh and retries once.
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ClientCredentials from "./ClientCredentials.js"
import type * as Request from "./internal/client/request.js"
import type * as Schemas from "./internal/client/schemas.js"
import * as ClientService from "./internal/client/service.js"
import { isVisibleAscii } from "@service-sdk/shared/redact"
import {
  type ApiError,
  type AuthenticationError,
  ConfigurationError,
  type RateLimitError,
  type TokenCacheError,
  type TransportError
} from "./ServiceError.js"
import * as TokenProvider from "./TokenProvider.js"
import { UserTokens } from "./UserTokens.js"

/**
 * The client's options.
 *
 * @since 2.0.0
 * @category options
 */
export interface Options {
  /** The data API (default `https://api.service.example/v1`, or `SERVICE_SDK_API_URL`). */
  readonly apiUrl?: string | undefined
  /** Per attempt, headers and body (default 30 s). */
  readonly timeout?: Duration.Input | undefined
  /** Retries after the first attempt (default 3). */
  readonly maxRetries?: number | undefined
  /** The longest `Retry-After` a 429 is waited for; longer fails at once with RateLimitError (default 60 s). */
  readonly maxRetryAfter?: Duration.Input | undefined
}

/**
 * What `http` fails with.
 *
 * @since 2.0.0
 * @category models
 */
export type HttpError = AuthenticationError | RateLimitError | TransportError | TokenCacheError

/**
 * What `request` and the resources fail with.
 *
 * @since 2.0.0
 * @category models
 */
export type Error = ApiError | HttpError

/**
 * The options of `request`.
 *
 * @since 2.0.0
 * @category options
 */
export type RequestOptions<A> = Request.RequestOptions<A>

/**
 * The data API's bodies.
 *
 * @since 2.0.0
 */
export type { Schemas }

/**
 * The client.
 *
 * @since 2.0.0
 * @category models
 */
export interface Service {
  /** Authenticated, prefixed with `apiUrl`, with the retry/401/429 policy. */
  readonly http: HttpClient.HttpClient.With<HttpError>
  readonly request: <A = unknown>(
    method: Request.HttpMethod,
    path: string,
    options?: RequestOptions<A>
  ) => Effect.Effect<A, Error>
  readonly users: { readonly me: Effect.Effect<Schemas.User, Error> }
  readonly albums: { readonly get: (id: string) => Effect.Effect<Schemas.Album, Error> }
  readonly library: {
    readonly savedTracks: (options?: {
      readonly limit?: number | undefined
      readonly offset?: number | undefined
    }) => Effect.Effect<Schemas.SavedTracksPage, Error>
    readonly saveTracks: (ids: ReadonlyArray<string>) => Effect.Effect<void, Error>
  }
  readonly follows: {
    readonly followedArtists: (options?: {
      readonly limit?: number | undefined
      readonly after?: string | undefined
    }) => Effect.Effect<Schemas.FollowedArtists, Error>
  }
  readonly player: { readonly playbackState: Effect.Effect<Option.Option<Schemas.PlaybackState>, Error> }
  readonly playlists: {
    readonly addItems: (id: string, uris: ReadonlyArray<string>) => Effect.Effect<Schemas.PlaylistSnapshot, Error>
  }
  /** The same client with another provider's bearer (`forUser`). */
  readonly withTokenProvider?: ((provider: TokenProvider.Service) => Service) | undefined
}

/**
 * The client service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { ServiceClient } from "@service-sdk/effect"
 *
 * const program = Effect.gen(function* () {
 *   const client = yield* ServiceClient
 *   const album = yield* client.albums.get("6akEvsycLGftJxYudPjmqK")
 *   return album.name
 * }).pipe(Effect.provide(ServiceClient.layerClientCredentials()), Effect.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 2.0.0
 * @category tags
 */
export class ServiceClient extends Context.Service<ServiceClient, Service>()("service-sdk/ServiceClient") {
  /** {@link make} */
  static make(options?: Options) {
    return make(options)
  }
  /** {@link makeWith} */
  static makeWith(provider: TokenProvider.Service, options?: Options) {
    return makeWith(provider, options)
  }
  /** {@link layer} */
  static layer(options?: Options) {
    return layer(options)
  }
  /** {@link layerAccessToken} */
  static layerAccessToken(token: string | Redacted.Redacted<string>, options?: Options) {
    return layerAccessToken(token, options)
  }
  /** {@link layerClientCredentials} */
  static layerClientCredentials(options?: ClientCredentials.Options & Options) {
    return layerClientCredentials(options)
  }
  /** {@link forUser} */
  static forUser(userId: string) {
    return forUser(userId)
  }
}

/**
 * A client over a given provider.
 *
 * @since 2.0.0
 * @category constructors
 */
export const makeWith = (
  provider: TokenProvider.Service,
  options: Options = {}
): Effect.Effect<Service, ConfigurationError, HttpClient.HttpClient> =>
  typeof provider?.getAccessToken !== "object" || typeof provider.forceRefresh !== "function"
    ? Effect.fail(
        new ConfigurationError({
          message: "ServiceClient.makeWith needs a TokenProvider service (getAccessToken and forceRefresh)"
        })
      )
    : Effect.gen(function* () {
        return ClientService.build(yield* ClientService.resolveOptions(options), provider, yield* HttpClient.HttpClient)
      })

/**
 * A client over the `TokenProvider` in context.
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Service, ConfigurationError, TokenProvider.TokenProvider | HttpClient.HttpClient> =>
  Effect.gen(function* () {
    return yield* makeWith(yield* TokenProvider.TokenProvider, options)
  })

/**
 * {@link make} as a layer.
 *
 * @since 2.0.0
 * @category constructors
 */
export const layer = (
  options: Options = {}
): Layer.Layer<ServiceClient, ConfigurationError, TokenProvider.TokenProvider | HttpClient.HttpClient> =>
  Layer.effect(ServiceClient, make(options))

const checkAccessToken = (token: string | Redacted.Redacted<string>) => {
  const value: unknown = Redacted.isRedacted(token) ? Redacted.value(token) : token
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
 * A client with a fixed access token (no provider: a 401 is final).
 *
 * @since 2.0.0
 * @category constructors
 */
export const layerAccessToken = (
  token: string | Redacted.Redacted<string>,
  options: Options = {}
): Layer.Layer<ServiceClient, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effect(
    ServiceClient,
    Effect.gen(function* () {
      const accessToken = yield* checkAccessToken(token)
      return ClientService.build(
        yield* ClientService.resolveOptions(options),
        { getAccessToken: Effect.succeed(accessToken) },
        yield* HttpClient.HttpClient
      )
    })
  )

/**
 * A client with its own `ClientCredentials` provider.
 *
 * @since 2.0.0
 * @category constructors
 */
export const layerClientCredentials = (
  options: ClientCredentials.Options & Options = {}
): Layer.Layer<ServiceClient, ConfigurationError, HttpClient.HttpClient> =>
  layer(options).pipe(Layer.provide(ClientCredentials.layer(options)))

/**
 * The client's policy with that user's bearer (their own tokens, their own forced refresh on a 401).
 *
 * @since 2.0.0
 * @category utils
 */
export const forUser = (userId: string): Effect.Effect<Service, never, UserTokens | ServiceClient> =>
  Effect.gen(function* () {
    const users = yield* UserTokens
    const client = yield* ServiceClient
    if (client.withTokenProvider === undefined) {
      return yield* Effect.die(
        new globalThis.Error("ServiceClient.forUser needs a client with withTokenProvider (one made by this module)")
      )
    }
    return client.withTokenProvider(users.provider(userId))
  })

/**
 * The types that go with {@link ServiceClient}.
 *
 * @since 2.0.0
 */
export declare namespace ServiceClient {
  export type Service = import("./ServiceClient.js").Service
  export type Options = import("./ServiceClient.js").Options
  export type Error = import("./ServiceClient.js").Error
  export type HttpError = import("./ServiceClient.js").HttpError
}
