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
import { AuthenticationError } from "../ServiceError.js"
import { TokenInfo } from "../TokenInfo.js"
import * as SignInEnd from "@service-sdk/shared/signInEnd"
import * as SignIn from "./signIn.js"
import { RefreshRejected } from "./singleFlight.js"

export interface Options {
  /** A refresh token to start from when the cache has none (the constructor's `refreshToken`). */
  readonly initialRefreshToken?: Redacted.Redacted<string> | undefined
  /** The AuthenticationError message when there is neither a token nor a refresh token. */
  readonly noTokenMessage: string
  /** Span and log prefix of the warning near the end of a sign-in. */
  readonly name: string
  /** How long a sign-in lasts when the entry does not say (`refreshTokenLifetime`). */
  readonly refreshTokenLifetime: Duration.Duration | undefined
}

const authFailure = (message: string, payload?: AuthenticationError["payload"]) =>
  new AuthenticationError({ message, ...(payload !== undefined ? { payload } : {}) })

/** RFC 6749 §5.2: `invalid_grant`, or a 400 that names no error code at all (`shared/signInEnd.ts`). */
const isRejection = (error: AuthenticationError | { readonly _tag: string }) =>
  error._tag === "AuthenticationError" && SignInEnd.isFinalRefusal(error as AuthenticationError)

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

  // RFC 6749 §6: refresh with the newest refresh token; a response without one keeps it.
  return (current: Option.Option<TokenInfo>) => {
    const { rejected, token: refreshToken } = chooseRefreshToken(current)
    if (refreshToken === undefined) {
      return Effect.fail(
        rejected
          ? authFailure(SignInEnd.REJECTED_EARLIER.message, { ...SignInEnd.REJECTED_EARLIER.payload })
          : authFailure(options.noTokenMessage, {
              error: "no_token",
              error_description: "no token and no refresh token to renew with"
            })
      )
    }
    const previous = Option.getOrUndefined(current)
    // the scope and the sign-in carry over (refreshing does not extend a sign-in: refresh tokens that expire)
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
          // "sign in again" at the first failure, and, at the end of the sign-in, that it ended
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
