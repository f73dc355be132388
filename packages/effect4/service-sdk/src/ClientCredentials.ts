/**
 * App-only tokens (RFC 6749 §4.4): fetched, cached and renewed before expiry, one request for many callers.
 *
 * @since 2.0.0
 */
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type { ProtocolOptions } from "./internal/config.js"
import * as Provider from "./internal/provider.js"
import * as SingleFlight from "./internal/singleFlight.js"
import type { ConfigurationError } from "./ServiceError.js"
import * as TokenProvider from "./TokenProvider.js"

/**
 * The protocol's options (`OAuthClient.Options`) with ownership: `tokenCache` (default memory) and `skew` (30 s).
 *
 * @since 2.0.0
 */
export type Options = Omit<ProtocolOptions, "redirectUri" | "publicClient" | "issuer"> & Provider.OwnershipOptions

/**
 * A provider of app tokens, over the `HttpClient` in context. When a shared cache cannot be reached it renews in
 * this process alone (a warning is logged; sharing resumes when the cache answers).
 *
 * @since 2.0.0
 */
export const make = (
  options: Options = {}
): Effect.Effect<TokenProvider.Service, ConfigurationError, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const resolved = yield* Provider.resolve(options)
    const { oauth, protocol } = resolved
    const flight = yield* SingleFlight.make({
      name: "ClientCredentials",
      cache: resolved.cache,
      skewMillis: resolved.skewMillis,
      refreshAheadMillis: resolved.refreshAheadMillis,
      renew: () => Effect.map(oauth.clientCredentials(), (token) => Provider.bind(protocol, token)),
      accepts: Provider.accepts(protocol),
      whenCacheDown: "local",
      entryGone: "keep"
    })
    return TokenProvider.TokenProvider.of({
      getAccessToken: flight.getAccessToken,
      forceRefresh: flight.forceRefresh
    })
  })

/**
 * {@link make} as the `TokenProvider` layer.
 *
 * @since 2.0.0
 */
export const layer = (
  options: Options = {}
): Layer.Layer<TokenProvider.TokenProvider, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effect(TokenProvider.TokenProvider, make(options))
