/**
 * What both providers share: resolving their options (explicit, then environment, then defaults), binding the
 * token endpoint to the `HttpClient`, and wiring the single flight into a `TokenProvider` service.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { type AuthenticationError, ConfigurationError, type TransportError } from "../ServiceError.js"
import * as TokenCache from "../TokenCache.js"
import { TokenInfo } from "../TokenInfo.js"
import type { TokenProviderService } from "../TokenProvider.js"
import {
  checkProviderOptions,
  nonNegativeDuration,
  normalizeScope,
  positiveDuration,
  resolveCredentials,
  resolveUrl,
  retryCount
} from "./config.js"
import * as SingleFlight from "./singleFlight.js"
import * as TokenEndpoint from "./tokenEndpoint.js"

/** The options both providers take. */
export interface ProviderOptions {
  readonly clientId?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  readonly scope?: string | ReadonlyArray<string> | undefined
  readonly authUrl?: string | undefined
  readonly tokenCache?: TokenCache.TokenCache | undefined
  /** Per attempt (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries after the first attempt (default 3). */
  readonly maxRetries?: number | undefined
  /** A token is renewed this long before it expires (default 30 s). */
  readonly skew?: Duration.DurationInput | undefined
  /**
   * Off by default. Within this long of going stale, the first caller starts a background renewal (single flight, in
   * the provider's scope) and is served the still-valid token, so at steady load nobody waits at an expiry; a failed
   * background renewal is logged and the normal path takes over at staleness.
   */
  readonly refreshAhead?: Duration.DurationInput | undefined
}

export interface ResolvedProvider {
  readonly authUrl: string
  readonly clientId: string
  /** A client without a secret (RFC 6749 §2.1): `client_id` in token request bodies, no Authorization header. */
  readonly publicClient: boolean
  readonly scope: string | undefined
  readonly cache: TokenCache.TokenCache
  readonly skew: Duration.Duration
  /** None when off. */
  readonly refreshAhead: Duration.Duration | undefined
  readonly endpoint: TokenEndpoint.TokenEndpoint
}

export const resolve = (options: ProviderOptions & { readonly publicClient?: boolean | undefined }) =>
  Effect.gen(function* () {
    yield* checkProviderOptions(options)
    const { clientId, clientSecret } = yield* resolveCredentials(options)
    const authUrl = yield* resolveUrl(options.authUrl, "authUrl")
    const timeout = yield* positiveDuration(options.timeout, "30 seconds", "timeout")
    const maxRetries = yield* retryCount(options.maxRetries)
    const skew = yield* nonNegativeDuration(options.skew, "30 seconds", "skew")
    const refreshAhead = yield* refreshAheadOption(options.refreshAhead)
    const httpClient = yield* HttpClient.HttpClient
    const cache = options.tokenCache ?? (yield* TokenCache.memory())
    const endpoint = TokenEndpoint.make({ authUrl, clientId, clientSecret, timeout, maxRetries }, httpClient)
    const publicClient = clientSecret === undefined
    return {
      authUrl,
      clientId,
      publicClient,
      scope: normalizeScope(options.scope),
      cache,
      skew,
      refreshAhead,
      endpoint
    } satisfies ResolvedProvider
  })

/** `refreshAhead`: off when absent, else a positive, finite duration. */
export const refreshAheadOption = (
  value: Duration.DurationInput | undefined
): Effect.Effect<Duration.Duration | undefined, ConfigurationError> =>
  value === undefined
    ? Effect.succeed(undefined)
    : Effect.filterOrFail(
        positiveDuration(value, value, "refreshAhead"),
        (duration) => Duration.toMillis(duration) > 0,
        () => new ConfigurationError({ message: "refreshAhead must be a positive duration" })
      )

/** A provider's synchronous read of its cached token (see {@link SingleFlight.SingleFlight.peek}). */
export type Peek = () => Redacted.Redacted<string> | undefined

/**
 * The fast path of the providers this module made, by service: a declared registry (a `WeakMap`, so a provider's
 * entry goes with it), not a hidden member of the service object.
 */
const peeks = new WeakMap<TokenProviderService, Peek>()

/** A provider's cached token without running an Effect, when it is still valid and the provider can tell. */
export const peek = (provider: TokenProviderService): Redacted.Redacted<string> | undefined => peeks.get(provider)?.()

/**
 * Whether a cache entry belongs to this provider: written for the same `client_id` and `auth_url` (an
 * entry without them is accepted), with every scope the provider asks for when the entry names its scope.
 */
export const accepts =
  (resolved: Pick<ResolvedProvider, "clientId" | "authUrl" | "scope">) =>
  (token: TokenInfo): boolean => {
    if (token.clientId !== undefined && token.clientId !== resolved.clientId) return false
    if (token.authUrl !== undefined && token.authUrl !== resolved.authUrl) return false
    if (resolved.scope === undefined || token.scope === undefined) return true
    const granted = new Set(token.scope.split(" "))
    return resolved.scope.split(" ").every((scope) => granted.has(scope))
  }

/** The token stamped with the provider's client and authorization server, as every provider writes entries. */
export const bind = (resolved: Pick<ResolvedProvider, "clientId" | "authUrl">, token: TokenInfo): TokenInfo =>
  token.clientId === resolved.clientId && token.authUrl === resolved.authUrl
    ? token
    : new TokenInfo({ ...token, clientId: resolved.clientId, authUrl: resolved.authUrl })

/** A `TokenProvider` service on the shared single flight. */
export const makeService = (
  name: string,
  resolved: ResolvedProvider,
  renew: (
    current: Option.Option<TokenInfo>
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | SingleFlight.RefreshRejected>,
  whenCacheDown: "local" | "fail",
  entryGone: "signedOut" | "keep" = "keep"
) =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    // Background work (renewals ahead of expiry, retried cache writes) runs in the scope the provider is made in (a
    // layer's); the public `make`s take no Scope (DESIGN section 3), so without one it runs in a scope of its own.
    const scope = Option.getOrElse(yield* Effect.serviceOption(Scope.Scope), () => Effect.runSync(Scope.make()))
    const flight = yield* SingleFlight.make({
      name,
      cache: resolved.cache,
      skew: resolved.skew,
      refreshAhead: resolved.refreshAhead,
      scope,
      clock,
      renew: (current) => Effect.map(renew(current), (token) => bind(resolved, token)),
      accepts: accepts(resolved),
      whenCacheDown,
      entryGone
    })
    const service: TokenProviderService = {
      getAccessToken: flight.getAccessToken,
      forceRefresh: flight.forceRefresh
    }
    peeks.set(service, flight.peek)
    return { service, store: (token: TokenInfo) => flight.store(bind(resolved, token)), signOut: flight.signOut }
  })
