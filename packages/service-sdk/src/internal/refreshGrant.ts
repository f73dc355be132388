/**
 * Renewal with the refresh token (RFC 6749 §6) for the single flight: which refresh token to send and what an
 * `invalid_grant` means, shared by `AuthorizationCode` (one user) and `UserTokens` (one per user), so the rule lives
 * in one place. The request itself is the protocol's `OAuthClient.refresh`.
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as OAuthClient from "../OAuthClient.js"
import { AuthenticationError, type TransportError } from "../ServiceError.js"
import type { TokenInfo } from "../TokenInfo.js"
import * as SignIn from "./signIn.js"
import { RefreshRejected } from "./singleFlight.js"
import { derivedToken } from "./derivedToken.js"

export interface Options {
  /** A refresh token to start from when the cache has none (the constructor's `refreshToken`). */
  readonly initialRefreshToken?: Redacted.Redacted<string> | undefined
  /** The AuthenticationError message when there is neither a token nor a refresh token. */
  readonly noTokenMessage: string
  /** How long a sign-in lasts when the entry does not say (`refreshTokenLifetime`). */
  readonly refreshTokenLifetime?: Duration.Duration | undefined
  /** The log prefix of the warning near the end of a sign-in. */
  readonly name?: string | undefined
}

const authFailure = (message: string, payload?: AuthenticationError["payload"]) =>
  new AuthenticationError({ message, payload })

/**
 * Nothing to serve and nothing to renew with (never signed in, or signed out): `payload.error` is `"no_token"`, so
 * that a program (the CLI) tells it apart without reading the message.
 */
export const noToken = (message: string) =>
  authFailure(message, { error: "no_token", error_description: "no token and no refresh token to renew with" })

/** A renewal function: each call of `make` has its own memory of rejected refresh tokens. */
export const make = (oauth: Pick<OAuthClient.Service, "refresh">, options: Options) => {
  const { initialRefreshToken } = options
  // Refresh tokens the server refused for good in this process (`invalid_grant`, or a 400 without an error code):
  // never sent again (RFC 6749 §5.2).
  const rejectedHere = new Set<string>()

  /**
   * The refresh token to send: the newest one cached, unless it was rejected (by any process: the entry says so),
   * then the constructor's `refreshToken` if it is another one and was not rejected either.
   */
  const chooseRefreshToken = (current: Option.Option<TokenInfo>) => {
    const cached = Option.getOrUndefined(Option.flatMapNullable(current, (token) => token.refreshToken))
    const cachedRejected = Option.exists(current, (token) => token.refreshRejected === true)
    const usable = (token: Redacted.Redacted<string> | undefined) =>
      token !== undefined && !rejectedHere.has(Redacted.value(token))
    if (usable(cached) && !cachedRejected) return { token: cached, rejected: false } as const
    const fallback =
      initialRefreshToken !== undefined &&
      usable(initialRefreshToken) &&
      (cached === undefined || Redacted.value(cached) !== Redacted.value(initialRefreshToken))
        ? initialRefreshToken
        : undefined
    return { token: fallback, rejected: cached !== undefined || rejectedHere.size > 0 } as const
  }

  // RFC 6749 §6: refresh with the newest refresh token; a response without one keeps it.
  return (
    current: Option.Option<TokenInfo>
  ): Effect.Effect<TokenInfo, AuthenticationError | TransportError | RefreshRejected> => {
    const { rejected, token: refreshToken } = chooseRefreshToken(current)
    if (refreshToken === undefined) {
      return Effect.fail(rejected ? SignIn.rejectedEarlier() : noToken(options.noTokenMessage))
    }
    const previous = Option.getOrUndefined(current)
    // the protocol keeps the refresh token sent when the response has none; the scope and the sign-in carry over
    // (refreshing does not extend a sign-in: refresh tokens that expire)
    return oauth.refresh(refreshToken).pipe(
      Effect.flatMap((response) =>
        Effect.clockWith((clock) => {
          const token = SignIn.carried(
            previous,
            response.scope !== undefined || previous?.scope === undefined
              ? response
              : derivedToken({ ...response, scope: previous.scope })
          )
          const nowSeconds = clock.unsafeCurrentTimeMillis() / 1000
          const warning = SignIn.nearEndWarning(
            options.name ?? "refresh",
            token,
            options.refreshTokenLifetime,
            nowSeconds
          )
          return warning === undefined ? Effect.succeed(token) : Effect.as(Effect.logWarning(warning), token)
        })
      ),
      Effect.catchIf(SignIn.isFinalRefusal, (error) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          rejectedHere.add(Redacted.value(refreshToken))
          // the entry that held it, marked, so that no process of the fleet sends it again
          const marked = Option.match(current, {
            onNone: () => undefined,
            onSome: (token) => derivedToken({ ...token, refreshToken, refreshRejected: true })
          })
          // "sign in again" at the first failure, and, at the end of the sign-in, that it ended
          const said = SignIn.rejectedError(error, previous, options.refreshTokenLifetime, now / 1000)
          return Effect.fail(new RefreshRejected(said, marked))
        })
      )
    )
  }
}
