/**
 * The authorization code flow for command-line apps (RFC 8252 §7.3): a loopback HTTP server receives the redirect.
 *
 * @since 1.0.0
 */
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { AuthorizationCode, type AuthorizationUrlOptions } from "./AuthorizationCode.js"
import { positiveDuration } from "./internal/config.js"
import { BrowserOpener } from "./internal/local/browser.js"
import * as CallbackReceiver from "./internal/local/callbackReceiver.js"
import { failurePageFor, type Page, successPage } from "@service-sdk/shared/loopbackPages"
import { parseLoopbackRedirect } from "./internal/local/redirectUri.js"
import { AuthenticationError, ConfigurationError, type TokenCacheError, type TransportError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"
import { randomState } from "@service-sdk/shared/pkce"

/**
 * Options of {@link authorizeLocal}: the scope to ask for, whether to open the browser, a hook that receives the consent URL, and the timeout.
 *
 * @since 1.0.0
 * @category options
 */
export interface AuthorizeLocalOptions extends Omit<AuthorizationUrlOptions, "codeChallenge"> {
  /** How long to wait for the callback (default 300 s); then AuthenticationError. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Open the system browser on the authorization URL (default true). */
  readonly openBrowser?: boolean | undefined
  /**
   * Receives the authorization URL once the server listens (to print it, or to drive a browser). Without it, the
   * URL is printed to stderr. It runs beside the wait, so it may drive a browser through the whole redirect; a
   * defect in it ends the flow, and on success the flow returns once it has finished too.
   */
  readonly onAuthorizationUrl?: ((url: string) => Effect.Effect<void> | void) | undefined
}

const seconds = (duration: Duration.Duration) => `${Number(Duration.toSeconds(duration).toFixed(3))} s`

const announce = (url: string, onAuthorizationUrl: AuthorizeLocalOptions["onAuthorizationUrl"]) =>
  onAuthorizationUrl === undefined
    ? Console.error(`Open this URL to authorize: ${url}`)
    : Effect.suspend(() => {
        const result = onAuthorizationUrl(url)
        return Effect.isEffect(result) ? result : Effect.void
      })

/** Opens the browser; when that fails, makes sure the URL still reaches the user. */
const openBrowser = (url: string, printed: boolean) =>
  Effect.flatMap(BrowserOpener, (open) => open(url)).pipe(
    Effect.catchAll((error) =>
      printed
        ? Effect.logWarning(`authorizeLocal: could not open a browser (${error.reason})`)
        : Console.error(`Could not open a browser (${error.reason}). Open this URL to authorize: ${url}`)
    )
  )

/** Bounded: the browser tab may be gone, and the outcome is decided either way. */
const reply = (callback: CallbackReceiver.Callback, page: Page) =>
  Effect.timeoutOption(callback.reply(page), "2 seconds")

/**
 * Runs the whole authorization code flow for a command-line app, and returns the tokens (also stored in the
 * provider's cache). It listens on the host and port of the provider's `redirectUri` (`http` on 127.0.0.1 or [::1];
 * without a port, on a free port for this sign-in, sent in the authorization URL and the code exchange alike; RFC
 * 8252 §7.3), sends the user to the authorization URL (`onAuthorizationUrl` and/or the system
 * browser; printed when there is no `onAuthorizationUrl`), checks the callback's `state` (random when not given),
 * exchanges the code and closes the server. Interrupting it closes the server at once.
 *
 * Fails with ConfigurationError for an unusable `redirectUri`, a port in use or `openBrowser: false` without
 * `onAuthorizationUrl`; with AuthenticationError for an `error` callback, a state mismatch, a rejected code or a
 * timeout.
 *
 * @example
 * ```ts
 * import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { AuthorizationCode, authorizeLocal, TokenCache } from "@service-sdk/effect"
 *
 * const login = Effect.gen(function* () {
 *   const tokenCache = yield* TokenCache.file("tokens.json")
 *   const provider = AuthorizationCode.layer({ redirectUri: "http://127.0.0.1:8080/callback", tokenCache })
 *   return yield* authorizeLocal({ scope: ["user-read-private"] }).pipe(Effect.provide(provider))
 * }).pipe(Effect.provide([NodeHttpClient.layerUndici, NodeFileSystem.layer]))
 * ```
 *
 * @since 1.0.0
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
  yield* Effect.annotateCurrentSpan({ redirectUri: redirect.uri })
  // a random state unless one is given; the loopback server only answers callbacks that carry it
  const state = options.state !== undefined && options.state !== "" ? options.state : yield* Effect.sync(randomState)

  return yield* Effect.scoped(
    Effect.gen(function* () {
      const receiver = yield* CallbackReceiver.receive(redirect, state)
      // RFC 8252 §7.3: a loopback redirect URI without a port gets the ephemeral one this sign-in listens on, in the
      // authorization request and in the code exchange alike
      const redirectUri = redirect.port === 0 ? redirect.uriFor(receiver.port) : undefined
      // PKCE for both client kinds (RFC 8252 §8.1, RFC 9700 §2.1.1)
      const pending = yield* provider.beginAuthorization({
        state,
        scope: options.scope,
        showDialog: options.showDialog,
        redirectUri
      })
      const { url } = pending
      yield* Effect.logDebug(`authorizeLocal: listening on ${redirectUri ?? redirect.origin}, waiting for the callback`)
      // Beside the wait: the callback may itself drive a browser through the whole redirect.
      const announcing = yield* Effect.forkScoped(announce(url, options.onAuthorizationUrl))
      if (options.openBrowser !== false) {
        yield* Effect.forkScoped(openBrowser(url, options.onAuthorizationUrl === undefined))
      }
      const callback = yield* Effect.raceFirst(
        Effect.timeoutFail(receiver.callback, {
          duration: timeout,
          onTimeout: () =>
            new AuthenticationError({
              message: `authorizeLocal: timed out waiting for the authorization callback after ${seconds(timeout)}`
            })
        }),
        // Only a failing announcement ends the wait.
        Effect.zipRight(Fiber.join(announcing), Effect.never)
      )
      // The receiver checked the state already; completeAuthorization checks the whole callback again (state, repeated
      // parameters, `iss`) and sends the verifier.
      const token = yield* provider
        .completeAuthorization(callback.query, pending)
        .pipe(Effect.tapError((error) => reply(callback, failurePageFor(error))))
      yield* reply(callback, successPage())
      yield* Effect.logDebug("authorizeLocal: authorized")
      // On success the announcement finishes too (a browser it drives has the final page by now).
      yield* Fiber.join(announcing)
      return token
    })
  )
})
