/**
 * What the providers share: their options (the protocol's, extended with ownership), the protocol client they
 * reach the token endpoint through (`OAuthClient`), cache entries bound to their client, and the refresh grant with
 * its `invalid_grant` memory (one user, or one per user).
 */
import * as Duration from "effect/Duration"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as OAuthClient from "../OAuthClient.js"
import { AuthenticationError } from "../ServiceError.js"
import * as TokenCache from "../TokenCache.js"
import { TokenInfo } from "../TokenInfo.js"
import {
  nonNegativeDuration,
  positiveDuration,
  type ProtocolOptions,
  type ResolvedProtocol,
  resolveProtocol
} from "./config.js"
import * as Protocol from "./oauthClient.js"
import * as SignInEnd from "@service-sdk/shared/signInEnd"
import * as SignIn from "./signIn.js"
import { RefreshRejected } from "./singleFlight.js"
import * as TokenEndpoint from "./tokenEndpoint.js"

/** The ownership options every provider adds to the protocol's. */
export interface OwnershipOptions {
  /** Where the token is kept (default: in memory). */
  readonly tokenCache?: TokenCache.TokenCache | undefined
  /** A token is renewed this long before it expires (default 30 s). */
  readonly skew?: Duration.Input | undefined
  /**
   * Off by default. Within this long of going stale, the first caller starts a background renewal (single flight)
   * and is served the still-valid token, so at steady load nobody waits at an expiry; a failed background renewal is
   * logged and the normal path takes over at staleness.
   */
  readonly refreshAhead?: Duration.Input | undefined
}

export type ProviderOptions = ProtocolOptions & OwnershipOptions

export interface Resolved {
  readonly protocol: ResolvedProtocol
  readonly oauth: OAuthClient.Service
  readonly cache: TokenCache.TokenCache
  readonly skewMillis: number
  /** 0 when off. */
  readonly refreshAheadMillis: number
}

/** The options checked and resolved, and the protocol client over the `HttpClient` in context. */
export const resolve = (options: ProviderOptions) =>
  Effect.gen(function* () {
    const protocol = yield* resolveProtocol(options)
    const skew = yield* nonNegativeDuration(options.skew, "30 seconds", "skew")
    const refreshAhead =
      options.refreshAhead === undefined ? undefined : yield* positiveDuration(options.refreshAhead, 1, "refreshAhead")
    const oauth = Protocol.make(protocol, TokenEndpoint.make(protocol, yield* HttpClient.HttpClient))
    const cache = options.tokenCache ?? (yield* TokenCache.memory())
    return {
      protocol,
      oauth,
      cache,
      skewMillis: Duration.toMillis(skew),
      refreshAheadMillis: refreshAhead === undefined ? 0 : Duration.toMillis(refreshAhead)
    } satisfies Resolved
  })

/**
 * Whether a cache entry belongs to this provider: written for the same `client_id` and `auth_url` (an entry without
 * them is accepted), with every scope the provider asks for when the entry names its scope.
 */
export const accepts =
  (protocol: Pick<ResolvedProtocol, "clientId" | "authUrl" | "scope">) =>
  (token: TokenInfo): boolean => {
    if (token.clientId !== undefined && token.clientId !== protocol.clientId) return false
    if (token.authUrl !== undefined && token.authUrl !== protocol.authUrl) return false
    if (protocol.scope === undefined || token.scope === undefined) return true
    const granted = new Set(token.scope.split(" "))
    return protocol.scope.split(" ").every((scope) => granted.has(scope))
  }

/** The token stamped with the provider's client and authorization server, as every provider writes entries. */
export const bind = (protocol: Pick<ResolvedProtocol, "clientId" | "authUrl">, token: TokenInfo): TokenInfo =>
  token.clientId === protocol.clientId && token.authUrl === protocol.authUrl
    ? token
    : new TokenInfo({ ...token, clientId: protocol.clientId, authUrl: protocol.authUrl })

const authFailure = (message: string, payload?: AuthenticationError["payload"]) =>
  new AuthenticationError({ message, ...(payload !== undefined ? { payload } : {}) })

/** RFC 6749 §5.2: `invalid_grant`, or a 400 that names no error code at all (`shared/signInEnd.ts`). */
const isRejection = (error: AuthenticationError | { readonly _tag: string }) =>
  error._tag === "AuthenticationError" && SignInEnd.isFinalRefusal(error as AuthenticationError)

/**
 * The refresh grant as a renewal for the single flight, through `oauth.refresh`: each call of `refreshGrant` has
 * its own memory of rejected refresh tokens (never sent again, RFC 6749 §5.2).
 */
export const refreshGrant = (
  oauth: OAuthClient.Service,
  options: {
    /** A refresh token to start from when the cache has none (the constructor's `refreshToken`). */
    readonly initialRefreshToken?: Redacted.Redacted<string> | undefined
    /** The AuthenticationError message when there is neither a token nor a refresh token. */
    readonly noTokenMessage: string
    /** Span and log prefix of the warning near the end of a sign-in. */
    readonly name: string
    readonly refreshTokenLifetime: Duration.Duration | undefined
  }
) => {
  const { initialRefreshToken } = options
  const rejectedHere = new Set<string>()

  /**
   * The refresh token to send: the newest one cached, unless it was rejected (by any process: the entry says so),
   * then the constructor's `refreshToken` if it is another one and was not rejected either.
   */
  const choose = (current: Option.Option<TokenInfo>) => {
    const cached = Option.getOrUndefined(Option.flatMapNullishOr(current, (token) => token.refreshToken))
    const cachedRejected = Option.exists(current, (token) => token.refreshRejected === true)
    const usable = (token: Redacted.Redacted<string> | undefined): token is Redacted.Redacted<string> =>
      token !== undefined && !rejectedHere.has(Redacted.value(token))
    if (usable(cached) && !cachedRejected) return { token: cached, rejected: false } as const
    const fallback =
      usable(initialRefreshToken) &&
      (cached === undefined || Redacted.value(cached) !== Redacted.value(initialRefreshToken))
        ? initialRefreshToken
        : undefined
    return { token: fallback, rejected: cached !== undefined || rejectedHere.size > 0 } as const
  }

  return (current: Option.Option<TokenInfo>) => {
    const { rejected, token: refreshToken } = choose(current)
    if (refreshToken === undefined) {
      return Effect.fail(
        rejected
          ? authFailure(SignInEnd.REJECTED_EARLIER.message, { ...SignInEnd.REJECTED_EARLIER.payload })
          : authFailure(options.noTokenMessage)
      )
    }
    const previous = Option.getOrUndefined(current)
    return oauth.refresh(refreshToken).pipe(
      Effect.map((token) =>
        SignIn.carried(
          previous,
          token.scope !== undefined || previous?.scope === undefined
            ? token
            : new TokenInfo({ ...token, scope: previous.scope })
        )
      ),
      Effect.tap((token) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          SignIn.warnNearEnd(options.name, token, options.refreshTokenLifetime, now / 1000)
        )
      ),
      Effect.catchIf(isRejection, (error) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          rejectedHere.add(Redacted.value(refreshToken))
          // the entry that held it, marked, so that no process of the fleet sends it again
          const marked =
            previous === undefined ? undefined : new TokenInfo({ ...previous, refreshToken, refreshRejected: true })
          const wording = SignIn.rejectedError(
            error as AuthenticationError,
            previous,
            options.refreshTokenLifetime,
            now / 1000
          )
          return Effect.fail(new RefreshRejected(wording, marked))
        })
      )
    )
  }
}
