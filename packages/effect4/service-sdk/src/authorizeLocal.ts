/**
 * The loopback sign-in for command-line apps (RFC 8252): a one-shot server on the redirect URI, the authorization URL
 * announced (and a browser opened), the callback's state checked, the code exchanged with PKCE, the token cached.
 * Opt-in only: providers never open a browser or start a server by themselves.
 *
 * @since 2.0.0
 */
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { AuthorizationCode } from "./AuthorizationCode.js"
import { positiveDuration } from "./internal/config.js"
import { openBrowser } from "./internal/local/browser.js"
import * as CallbackReceiver from "./internal/local/callbackReceiver.js"
import { failurePageFor, successPage } from "@service-sdk/shared/loopbackPages"
import { parseLoopbackRedirect } from "./internal/local/redirectUri.js"
import type * as OAuthClient from "./OAuthClient.js"
import { AuthenticationError, ConfigurationError, type TokenCacheError, type TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The options of {@link authorizeLocal}.
 *
 * @since 2.0.0
 * @category options
 */
export interface AuthorizeLocalOptions extends Omit<OAuthClient.AuthorizationUrlOptions, "codeChallenge"> {
  /** How long to wait for the callback (default 300 s); then AuthenticationError. */
  readonly timeout?: Duration.Input | undefined
  /** Open the system browser on the authorization URL (default true). */
  readonly openBrowser?: boolean | undefined
  /** Hears the authorization URL (to print it, or to drive a browser in tests); default: printed on stderr. */
  readonly onAuthorizationUrl?: ((url: string) => Effect.Effect<void> | void) | undefined
}

/**
 * Signs the user in through the loopback redirect URI of the `AuthorizationCode` in context and returns the token
 * (also cached by the provider). Interruptible: the server closes at once.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { AuthorizationCode, authorizeLocal } from "@service-sdk/effect"
 *
 * // opens the browser on the consent page, waits for the redirect to the loopback port, exchanges the code
 * const token = authorizeLocal({ scope: ["user-read-private"] }).pipe(
 *   Effect.provide(
 *     AuthorizationCode.layer({ redirectUri: "http://127.0.0.1:8888/callback" }).pipe(
 *       Layer.provide(FetchHttpClient.layer)
 *     )
 *   )
 * )
 * ```
 *
 * @since 2.0.0
 * @category utils
 */
export const authorizeLocal: (
  options?: AuthorizeLocalOptions
) => Effect.Effect<
  TokenInfo,
  AuthenticationError | ConfigurationError | TransportError | TokenCacheError,
  AuthorizationCode
> = Effect.fn("authorizeLocal")(function* (options: AuthorizeLocalOptions = {}) {
  const provider = yield* AuthorizationCode
  const redirect = yield* parseLoopbackRedirect(provider.redirectUri)
  const timeout = yield* positiveDuration(options.timeout, "300 seconds", "timeout")
  if (options.openBrowser === false && options.onAuthorizationUrl === undefined) {
    return yield* new ConfigurationError({
      message: "authorizeLocal: openBrowser: false needs onAuthorizationUrl, or the authorization URL reaches no one"
    })
  }
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const server = yield* CallbackReceiver.receive(redirect)
      // PKCE for both client kinds (RFC 8252 §8.1, RFC 9700 §2.1.1); a random state unless one is given
      const pending = yield* provider.beginAuthorization({
        state: options.state,
        scope: options.scope,
        showDialog: options.showDialog,
        loginHint: options.loginHint,
        redirectUri: server.redirectUri
      })
      yield* server.expectState(pending.state)
      const announce =
        options.onAuthorizationUrl === undefined
          ? Console.error(`Open this URL to authorize: ${pending.url}`)
          : Effect.suspend(() => {
              const result = options.onAuthorizationUrl!(pending.url)
              return Effect.isEffect(result) ? result : Effect.void
            })
      // beside the wait: the announcement may itself drive a browser through the whole redirect
      yield* Effect.forkScoped(
        options.openBrowser === false ? announce : Effect.andThen(announce, openBrowser(pending.url))
      )
      const callback = yield* server.callback.pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () =>
            Effect.fail(
              new AuthenticationError({
                message: `authorizeLocal: timed out waiting for the authorization callback after ${Duration.format(timeout)}`
              })
            )
        })
      )
      const token = yield* provider
        .completeAuthorization(`?${callback.query.toString()}`, pending)
        .pipe(Effect.tapError((error) => callback.reply(failurePageFor(error))))
      yield* callback.reply(successPage())
      return token
    })
  )
})
