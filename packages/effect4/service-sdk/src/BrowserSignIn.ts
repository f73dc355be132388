/**
 * Sign-in by redirect in a browser page, as a public client with PKCE (no secret in the page): {@link start} keeps
 * the pending sign-in (its `state` and PKCE verifier) in the tab's `sessionStorage` and returns the consent page's
 * URL; the authorization server redirects back to the page; {@link complete} checks the callback by the contract's
 * rules (state first, a repeated parameter, `iss`, an `error`), exchanges the code with the verifier and stores the
 * token. The pending sign-in is used once: a definitive outcome forgets it (only a transport failure keeps it, so the
 * same callback can be completed again). Built on `OAuthClient.beginAuthorization`/`completeAuthorization`.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { BrowserSignIn, OAuthClient, TokenCache } from "@service-sdk/effect"
 *
 * const oauth = OAuthClient.layer({
 *   clientId: "my-public-client",
 *   publicClient: true,
 *   redirectUri: "https://app.example/callback"
 * }).pipe(Layer.provide(FetchHttpClient.layer))
 *
 * // on the "Sign in" button
 * const signIn = Effect.gen(function* () {
 *   const url = yield* BrowserSignIn.start({ scope: ["user-read-private"] })
 *   window.location.assign(url)
 * })
 *
 * // on the page the server redirects to
 * const callback = Effect.gen(function* () {
 *   const tokenCache = yield* TokenCache.browser()
 *   yield* BrowserSignIn.complete({ tokenCache })
 * })
 *
 * Effect.runPromise(Effect.provide(BrowserSignIn.isCallback() ? callback : signIn, oauth))
 * ```
 *
 * @since 2.0.0
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Internal from "./internal/browser/signIn.js"
import { type BeginAuthorizationOptions, OAuthClient } from "./OAuthClient.js"
import type { AuthenticationError, ConfigurationError, TokenCacheError, TransportError } from "./ServiceError.js"
import type { TokenCache } from "./TokenCache.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The options of {@link start}: those of `OAuthClient.beginAuthorization`, and the name of the pending sign-in.
 *
 * @since 2.0.0
 * @category models
 */
export interface StartOptions extends BeginAuthorizationOptions {
  /** Which pending sign-in, when a page runs more than one at once (default `"default"`). */
  readonly key?: string | undefined
}

/**
 * The options of {@link complete}.
 *
 * @since 2.0.0
 * @category models
 */
export interface CompleteOptions {
  /** The URL the server redirected to (default: the page's current address, then cleaned of the callback's parameters). */
  readonly callbackUrl?: string | undefined
  /** The pending sign-in's name, as given to {@link start} (default `"default"`). */
  readonly key?: string | undefined
  /** Where to store the new token (e.g. `TokenCache.browser()`), so every provider on that cache is signed in. */
  readonly tokenCache?: TokenCache | undefined
}

/**
 * Begins a sign-in: a fresh `state` and PKCE pair (unless `state` is given), kept in the tab's `sessionStorage` until
 * {@link complete}; returns the URL to send the user to (`window.location.assign(url)`). A sign-in started again in
 * the same tab replaces the pending one. ConfigurationError outside a page (no sessionStorage).
 *
 * @since 2.0.0
 * @category sign-in
 */
export const start = (options: StartOptions = {}): Effect.Effect<string, ConfigurationError, OAuthClient> =>
  Effect.gen(function* () {
    const key = yield* Internal.checkedKey(options.key, "BrowserSignIn.start")
    const storage = yield* Internal.sessionStorageOf("BrowserSignIn.start")
    const oauth = yield* OAuthClient
    const { key: _, ...begin } = options
    const pending = yield* oauth.beginAuthorization(begin)
    yield* Internal.save(
      storage,
      key,
      {
        state: pending.state,
        codeVerifier: Redacted.value(pending.codeVerifier),
        ...(pending.redirectUri !== undefined ? { redirectUri: pending.redirectUri } : {})
      },
      "BrowserSignIn.start"
    )
    return pending.url
  })

/**
 * Completes the sign-in this tab began: checks the callback (state first, then a repeated parameter, `iss`, an
 * `error` parameter, a missing code: each an AuthenticationError), exchanges the code with the pending verifier,
 * stores the token in `tokenCache` when given, and returns it. A callback with no pending sign-in in this tab (a
 * second completion, a link opened elsewhere) is an AuthenticationError. The pending sign-in is forgotten by any
 * outcome but a TransportError. When the callback is the page's own address, the callback's parameters are removed
 * from it (`history.replaceState`), so no code stays in the history.
 *
 * @since 2.0.0
 * @category sign-in
 */
export const complete = (
  options: CompleteOptions = {}
): Effect.Effect<TokenInfo, AuthenticationError | TransportError | ConfigurationError | TokenCacheError, OAuthClient> =>
  Effect.gen(function* () {
    const key = yield* Internal.checkedKey(options.key, "BrowserSignIn.complete")
    const storage = yield* Internal.sessionStorageOf("BrowserSignIn.complete")
    const callbackUrl = options.callbackUrl ?? (yield* Internal.currentUrl("BrowserSignIn.complete"))
    const oauth = yield* OAuthClient
    const token = yield* Effect.ensuring(
      Effect.flatMap(Internal.load(storage, key), (pending) =>
        oauth.completeAuthorization(callbackUrl, pending).pipe(
          Effect.tapError((error) => (error._tag === "TransportError" ? Effect.void : Internal.forget(storage, key))),
          Effect.tap(Internal.forget(storage, key))
        )
      ),
      Internal.cleanAddressBar(callbackUrl)
    )
    if (options.tokenCache !== undefined) yield* options.tokenCache.set(token)
    return token
  })

/**
 * Whether `url` (default: the page's address) is an authorization response: it carries `state` with `code` or
 * `error`. A page that is both the app and its redirect target calls {@link complete} then, else its usual work.
 *
 * @since 2.0.0
 * @category sign-in
 */
export const isCallback = (url?: string): boolean => {
  const href = url ?? (globalThis as { readonly location?: { readonly href?: string } }).location?.href
  if (typeof href !== "string") return false
  try {
    const params = new URL(href).searchParams
    return params.has("state") && (params.has("code") || params.has("error"))
  } catch {
    return false
  }
}

/**
 * Whether this tab has a sign-in pending (begun by {@link start}, not completed yet).
 *
 * @since 2.0.0
 * @category sign-in
 */
export const hasPending = (key?: string): boolean => {
  try {
    const storage = (globalThis as { readonly sessionStorage?: Storage }).sessionStorage
    return storage?.getItem(Internal.storageKey(key ?? "default")) != null
  } catch {
    return false
  }
}
