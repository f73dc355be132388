/**
 * Many users in one process: one provider per user over a `TokenStore`, each with its own single flight, and
 * memory that follows active users (an `RcMap`: a user's state is dropped after `idleTimeToLive` without use).
 *
 * @since 2.0.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as RcMap from "effect/RcMap"
import type * as Scope from "effect/Scope"
import type { ProtocolOptions } from "./internal/config.js"
import { positiveDuration } from "./internal/config.js"
import * as Provider from "./internal/provider.js"
import * as RefreshGrant from "./internal/refreshGrant.js"
import * as SingleFlight from "./internal/singleFlight.js"
import * as SharedHold from "./internal/sharedHold.js"
import { ConfigurationError, type TokenCacheError } from "./ServiceError.js"
import { TokenInfo } from "./TokenInfo.js"
import type * as TokenProvider from "./TokenProvider.js"
import type { TokenStore } from "./TokenStore.js"

/**
 * The options: the protocol's and `skew`, a `store`, and how long an idle user's state stays in memory.
 *
 * @since 2.0.0
 * @category options
 */
export type Options = ProtocolOptions &
  Pick<Provider.OwnershipOptions, "skew"> & {
    readonly store: TokenStore
    /** How long a user's in-memory state outlives its last use (default 5 minutes). */
    readonly idleTimeToLive?: Duration.Input | undefined
  }

/**
 * The many-users service.
 *
 * @since 2.0.0
 * @category models
 */
export interface Service {
  /** That user's tokens only. */
  readonly provider: (userId: string) => TokenProvider.Service
  /** Keeps a signed-in user's token (after `completeAuthorization`). */
  readonly signIn: (userId: string, token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Forgets the user's tokens, in this process and in the store. */
  readonly signOut: (userId: string) => Effect.Effect<void, TokenCacheError>
  /** When the user's sign-in ends, if known; none for a user with no entry or when nothing says. */
  readonly signInEndsAt: (userId: string) => Effect.Effect<Option.Option<Date>, TokenCacheError>
}

/**
 * The many-users service tag.
 *
 * @since 2.0.0
 * @category tags
 */
export class UserTokens extends Context.Service<UserTokens, Service>()("service-sdk/UserTokens") {
  /** {@link make} */
  static make(options: Options) {
    return make(options)
  }
  /** {@link layer} */
  static layer(options: Options) {
    return layer(options)
  }
}

const NOT_SIGNED_IN = "not signed in: no token for this user (sign the user in, then UserTokens.signIn)"

const userIdError = (userId: unknown): ConfigurationError | undefined =>
  typeof userId === "string" && userId !== ""
    ? undefined
    : new ConfigurationError({
        message: `userId must be a non-empty string, got ${typeof userId === "string" ? "an empty string" : typeof userId}`
      })

// a bad id from plain JS fails with ConfigurationError in the provider's error channel
const failBadUserId = (error: ConfigurationError): Effect.Effect<never, TokenCacheError> =>
  Effect.fail(error) as unknown as Effect.Effect<never, TokenCacheError>

/**
 * The service; users' states live in the current scope.
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Service, ConfigurationError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    if (typeof options?.store !== "function") {
      return yield* new ConfigurationError({
        message: "store must be a TokenStore (a function from user id to TokenCache), e.g. TokenStore.memory()"
      })
    }
    const { store } = options
    const idleTimeToLive = yield* positiveDuration(options.idleTimeToLive, "5 minutes", "idleTimeToLive")
    const resolved = yield* Provider.resolve({ ...options, tokenCache: undefined })
    const { oauth, protocol } = resolved

    // no idle time of its own: the holds keep an active user's entry, and let go of it after idleTimeToLive unused
    const users = yield* RcMap.make({
      lookup: (userId: string) => {
        const cache = store(userId)
        const refresh = RefreshGrant.make(oauth, {
          noTokenMessage: NOT_SIGNED_IN,
          name: "UserTokens",
          refreshTokenLifetime: protocol.refreshTokenLifetime
        })
        // A user whose entry is gone was signed out (maybe by another process). The renewal reads it under the lock
        // (`entryGone: "signedOut"`): an empty entry leaves no refresh token to renew with ("not signed in").
        const renew = (current: Option.Option<TokenInfo>) =>
          Effect.map(refresh(current), (token) => Provider.bind(protocol, token))
        return SingleFlight.make({
          name: "UserTokens",
          cache,
          skewMillis: resolved.skewMillis,
          renew,
          accepts: Provider.accepts(protocol),
          whenCacheDown: "fail",
          entryGone: "signedOut"
        })
      }
    })
    // a user's calls share one hold on the user's state, kept while the user is active
    const held = yield* SharedHold.make(users, { idleTimeToLive, scope: yield* Effect.scope })
    const withUser: <A, E>(
      userId: string,
      f: (flight: SingleFlight.SingleFlight) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E> = held.use

    const provider = (userId: string): TokenProvider.Service => {
      const error = userIdError(userId)
      if (error !== undefined) return { getAccessToken: failBadUserId(error), forceRefresh: () => failBadUserId(error) }
      return {
        getAccessToken: withUser(userId, (flight) => flight.getAccessToken),
        forceRefresh: (rejected) => withUser(userId, (flight) => flight.forceRefresh(rejected))
      }
    }

    const signIn = (userId: string, token: TokenInfo): Effect.Effect<void, TokenCacheError> =>
      Effect.suspend(() => {
        const error = userIdError(userId)
        if (error !== undefined) return failBadUserId(error)
        if (!(token instanceof TokenInfo)) {
          return Effect.die(
            new ConfigurationError({ message: "signIn needs a TokenInfo (e.g. from completeAuthorization)" })
          )
        }
        // every token records when it was issued (DESIGN section 9): one that does not is issued now, for all the
        // SDK can tell, so that a short-lived token is renewed half-way through what is left of it, not at once
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const stamped =
            token.issuedAt !== undefined
              ? token
              : new TokenInfo({ ...token, issuedAt: Math.min(now / 1000, token.expiresAt) })
          return withUser(userId, (flight) => flight.store(Provider.bind(protocol, stamped)))
        })
      }).pipe(Effect.withSpan("UserTokens.signIn"))

    const signOut = (userId: string): Effect.Effect<void, TokenCacheError> =>
      Effect.suspend(() => {
        const error = userIdError(userId)
        if (error !== undefined) return failBadUserId(error)
        return withUser(userId, (flight) => flight.signOut).pipe(
          Effect.andThen(held.drop(userId)),
          Effect.andThen(RcMap.invalidate(users, userId))
        )
      }).pipe(Effect.withSpan("UserTokens.signOut"))

    const signInEndsAt = (userId: string): Effect.Effect<Option.Option<Date>, TokenCacheError> =>
      Effect.suspend(() => {
        const error = userIdError(userId)
        if (error !== undefined) return failBadUserId(error)
        return Provider.signInEnd(store(userId), Provider.accepts(protocol), protocol.refreshTokenLifetime)
      })

    return { provider, signIn, signOut, signInEndsAt } satisfies Service
  })

/**
 * The service as a layer (users' states live in the layer's scope).
 *
 * @since 2.0.0
 * @category constructors
 */
export const layer = (options: Options): Layer.Layer<UserTokens, ConfigurationError, HttpClient.HttpClient> =>
  Layer.effect(UserTokens, make(options))

/**
 * The types that go with {@link UserTokens}.
 *
 * @since 2.0.0
 */
export declare namespace UserTokens {
  export type Service = import("./UserTokens.js").Service
  export type Options = import("./UserTokens.js").Options
}
