/**
 * Many users in one process (a web app): each user's tokens in their own `TokenStore` entry, renewed with the
 * refresh token grant under that user's own single flight. A user's in-memory state lives in an `RcMap` and is
 * dropped after `idleTimeToLive` without use (`internal/sharedHold.ts`), so memory follows active users, not every
 * user ever seen.
 *
 * @since 1.0.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as RcMap from "effect/RcMap"
import type * as Scope from "effect/Scope"
import type * as AuthorizationCode from "./AuthorizationCode.js"
import { positiveDuration } from "./internal/config.js"
import { derivedToken } from "./internal/derivedToken.js"
import * as Provider from "./internal/provider.js"
import * as RefreshGrant from "./internal/refreshGrant.js"
import * as SharedHold from "./internal/sharedHold.js"
import { ConfigurationError, type TokenCacheError } from "./ServiceError.js"
import { TokenInfo } from "./TokenInfo.js"
import type { TokenProviderService } from "./TokenProvider.js"
import type { TokenStore } from "./TokenStore.js"

/**
 * The options of `AuthorizationCode` (without `tokenCache` and `refreshToken`: each user's come from `store`), plus
 * the store and how long an unused user's state stays in memory.
 *
 * @since 1.0.0
 * @category options
 */
export interface Options extends Omit<AuthorizationCode.Options, "tokenCache" | "refreshToken"> {
  /** Where each user's tokens are kept: `TokenStore.memory()`, `TokenStore.directory(path)`, `RedisTokenStore`. */
  readonly store: TokenStore
  /** A user's in-memory state (memo, single flight) is dropped after this long without use (default 5 minutes). */
  readonly idleTimeToLive?: Duration.DurationInput | undefined
}

/**
 * What `UserTokens` provides: a `TokenProvider` per user id, sign-in (store a user's tokens) and sign-out (forget them).
 *
 * @since 1.0.0
 * @category models
 */
export interface UserTokensService {
  /**
   * That user's tokens only: `getAccessToken` serves or renews the user's token (one request for all concurrent
   * callers of that user); a user with no entry gets AuthenticationError "not signed in".
   */
  readonly provider: (userId: string) => TokenProviderService
  /** Keeps a token for the user (e.g. from `completeAuthorization`), bound to this client; replaces the previous one. */
  readonly signIn: (userId: string, token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /**
   * Forgets the user's tokens: clears the user's entry in the store (TokenCacheError when the store's caches have
   * no `clear`) and drops the in-memory state. Later calls for that user fail with "not signed in".
   */
  readonly signOut: (userId: string) => Effect.Effect<void, TokenCacheError>
  /**
   * When the user's sign-in ends, if known (the refresh token's end: `refresh_token_expires_in`, else the sign-in
   * time plus `refreshTokenLifetime`); none for a user with no entry or when nothing says.
   *
   * @since 1.0.0
   */
  readonly signInEndsAt: (userId: string) => Effect.Effect<Option.Option<Date>, TokenCacheError>
}

const NOT_SIGNED_IN = "not signed in: no token for this user (sign the user in, then UserTokens.signIn)"

/**
 * A user id from plain JS: a non-empty string, else a ConfigurationError (thrown: the Promise facade's constructors
 * and `forUser` check ids synchronously with it).
 *
 * @since 1.0.0
 * @category utils
 */
export const checkUserId = (userId: unknown): string => {
  const error = userIdError(userId)
  if (error !== undefined) throw error
  return userId as string
}

const userIdError = (userId: unknown): ConfigurationError | undefined =>
  typeof userId === "string" && userId !== ""
    ? undefined
    : new ConfigurationError({
        message: `userId must be a non-empty string, got ${typeof userId === "string" ? "an empty string" : typeof userId}`
      })

/**
 * A bad user id in the error channel. The services' declared error types predate it (DESIGN section 3 gives
 * `provider`, `signIn` and `signOut` no ConfigurationError), so it is typed as their errors; it is a ServiceError all
 * the same (`Effect.catchTag("ConfigurationError", …)` catches it).
 */
const failBadUserId = (error: ConfigurationError): Effect.Effect<never, TokenCacheError> =>
  Effect.fail(error) as unknown as Effect.Effect<never, TokenCacheError>

/**
 * The service in the current scope (users' states live in it). Fails with ConfigurationError on a bad option. Also
 * `UserTokens.make`; exported for the Promise facade, which builds its own runtime around it.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<UserTokensService, ConfigurationError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    if (typeof options?.store !== "function") {
      return yield* new ConfigurationError({
        message: "store must be a TokenStore (a function from user id to TokenCache), e.g. TokenStore.memory()"
      })
    }
    const { store } = options
    const idleTimeToLive = yield* positiveDuration(options.idleTimeToLive, "5 minutes", "idleTimeToLive")
    // resolved once: credentials, endpoint, skew…; each user gets their own cache and single flight
    // the Service's redirect URI rules hold here too, though UserTokens sends none (the sign-in does)
    const resolved = yield* Provider.resolve({ ...options, tokenCache: undefined })
    const { refreshTokenLifetime } = resolved

    interface UserState {
      readonly service: TokenProviderService
      readonly store: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
      readonly signOut: Effect.Effect<void, TokenCacheError>
      readonly joinUnderWay: (
        otherwise: TokenProviderService["getAccessToken"]
      ) => TokenProviderService["getAccessToken"] | undefined
    }
    // no idle time of its own: the holds keep an active user's entry, and let go of it after idleTimeToLive unused
    const users = yield* RcMap.make({
      lookup: (userId: string): Effect.Effect<UserState, never, Scope.Scope> => {
        const cache = store(userId)
        const refresh = RefreshGrant.make(resolved.oauth, {
          noTokenMessage: NOT_SIGNED_IN,
          refreshTokenLifetime,
          name: "UserTokens"
        })
        // The store's entry decides: a user whose entry is gone was signed out (maybe by another process sharing the
        // store). The renewal reads it under the lock (`entryGone: "signedOut"`): an empty entry leaves no refresh
        // token to renew with ("not signed in"), and is never written back.
        return Provider.makeService("UserTokens", { ...resolved, cache }, refresh, "fail", "signedOut")
      }
    })
    const held = yield* SharedHold.make(users, { idleTimeToLive, scope: yield* Effect.scope })
    const withUser: <A, E>(userId: string, f: (state: UserState) => Effect.Effect<A, E>) => Effect.Effect<A, E> =
      held.use

    const provider = (userId: string): TokenProviderService => {
      const error = userIdError(userId)
      if (error !== undefined) return { getAccessToken: failBadUserId(error), forceRefresh: () => failBadUserId(error) }
      const id = userId
      const getAccessToken = withUser(id, (state) => state.service.getAccessToken)
      return {
        // A caller that arrives while the user's renewal is under way awaits it, and needs no hold of its own: the
        // renewing call holds the user's state until the renewal ends.
        getAccessToken: Effect.suspend(() => held.peek(id)?.joinUnderWay(getAccessToken) ?? getAccessToken),
        forceRefresh: (rejected: Redacted.Redacted<string>) =>
          withUser(id, (state) => state.service.forceRefresh(rejected))
      }
    }

    const signIn = (userId: string, token: TokenInfo): Effect.Effect<void, TokenCacheError> =>
      Effect.suspend(() => {
        const error = userIdError(userId)
        if (error !== undefined) return failBadUserId(error)
        const id = userId
        if (!(token instanceof TokenInfo)) {
          return Effect.die(
            new ConfigurationError({ message: "signIn needs a TokenInfo (e.g. from completeAuthorization)" })
          )
        }
        // every token records when it was issued (DESIGN section 9): one that does not is issued now, for all the
        // SDK can tell, so that a short-lived token is renewed half-way through what is left of it, not at once
        return Effect.flatMap(Clock.currentTimeMillis, (now) =>
          withUser(id, (state) =>
            state.store(
              token.issuedAt !== undefined
                ? token
                : derivedToken({ ...token, issuedAt: Math.min(now / 1000, token.expiresAt) })
            )
          )
        )
      }).pipe(Effect.withSpan("UserTokens.signIn"))

    const signOut = (userId: string): Effect.Effect<void, TokenCacheError> =>
      Effect.suspend(() => {
        const error = userIdError(userId)
        if (error !== undefined) return failBadUserId(error)
        const id = userId
        // in the user's turn (the flight's local lock) and under the store's cross-process lock: a renewal under way
        // lands first, and one under way elsewhere cannot write its token back (its compare-and-set finds the entry gone)
        return withUser(id, (state) => state.signOut).pipe(
          Effect.zipRight(held.drop(id)),
          Effect.zipRight(RcMap.invalidate(users, id))
        )
      }).pipe(Effect.withSpan("UserTokens.signOut"))

    const signInEndsAt = (userId: string): Effect.Effect<Option.Option<Date>, TokenCacheError> =>
      Effect.suspend(() => {
        const error = userIdError(userId)
        if (error !== undefined) return failBadUserId(error)
        return Provider.signInEnd(store(userId), Provider.accepts(resolved), refreshTokenLifetime)
      })

    return { provider, signIn, signOut, signInEndsAt } satisfies UserTokensService
  })

/**
 * The tokens of many users, by user id.
 *
 * @example
 * ```ts
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { OAuthClient, ServiceClient, TokenStore, UserTokens } from "@service-sdk/effect"
 *
 * const options = { redirectUri: "http://127.0.0.1:3000/callback" }
 * // ownership: each user's tokens in the store; the protocol steps: OAuthClient (nothing cached)
 * const App = Layer.mergeAll(
 *   Layer.unwrapEffect(Effect.map(TokenStore.memory(), (store) => UserTokens.layer({ ...options, store }))),
 *   OAuthClient.layer(options)
 * ).pipe(Layer.provide(NodeHttpClient.layerUndici))
 *
 * // the callback route: complete the sign-in begun with `beginAuthorization`, then keep the tokens for that user
 * const completeSignIn = (userId: string, callbackUrl: string, pending: { state: string; codeVerifier: string }) =>
 *   Effect.gen(function* () {
 *     const oauth = yield* OAuthClient.OAuthClient
 *     const users = yield* UserTokens
 *     yield* users.signIn(userId, yield* oauth.completeAuthorization(callbackUrl, pending))
 *   })
 *
 * // a request for one user: that user's bearer, with the client's policy (a 401 renews only their token)
 * const profile = (userId: string) =>
 *   Effect.gen(function* () {
 *     const users = yield* UserTokens
 *     const client = yield* ServiceClient.makeWith(users.provider(userId))
 *     return yield* client.users.me
 *   })
 * ```
 *
 * @since 1.0.0
 * @category tags
 */
export class UserTokens extends Context.Tag("service-sdk/UserTokens")<UserTokens, UserTokensService>() {
  /**
   * The `UserTokens` service without a layer (scoped: users' in-memory state is released with the scope).
   *
   * @since 1.0.0
   */
  static readonly make = make
  /**
   * A scoped layer of {@link make}: users' states end with it.
   *
   * @example
   * ```ts
   * import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
   * import { Effect, Layer } from "effect"
   * import { TokenStore, UserTokens } from "@service-sdk/effect"
   *
   * // one 0600 file per user under ./tokens; a user's state leaves memory after 10 idle minutes
   * const Users = Layer.unwrapEffect(
   *   Effect.map(TokenStore.directory("./tokens"), (store) =>
   *     UserTokens.layer({ redirectUri: "http://127.0.0.1:3000/callback", store, idleTimeToLive: "10 minutes" })
   *   )
   * ).pipe(Layer.provide(Layer.merge(NodeHttpClient.layerUndici, NodeFileSystem.layer)))
   *
   * const signOut = (userId: string) => Effect.flatMap(UserTokens, (users) => users.signOut(userId))
   * ```
   *
   * @since 1.0.0
   */
  static layer(options: Options): Layer.Layer<UserTokens, ConfigurationError, HttpClient.HttpClient> {
    return Layer.scoped(UserTokens, make(options))
  }
}

/**
 * @since 1.0.0
 */
export declare namespace UserTokens {
  /** @since 1.0.0 */
  export type Service = UserTokensService
  /** @since 1.0.0 */
  export type Options = UserTokensOptions
}

type UserTokensOptions = Options
