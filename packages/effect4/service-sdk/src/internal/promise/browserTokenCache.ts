/**
 * `browserTokenCache` of the Promise facade (`@service-sdk/effect/promise`, `@service-sdk/promise`): the cache
 * `TokenCache.browser` makes, shared by every tab of one origin (Web Locks for the lock, IndexedDB for the entry),
 * for the facade's `tokenCache` option, which takes an Effect `TokenCache` as it is.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type BrowserOptions, browser, type TokenCache } from "../../TokenCache.js"

/**
 * A token cache shared by the tabs of one origin, for `new AsyncAuthorizationCode({ tokenCache })` and the other
 * constructors of the Promise facade in a browser page. Throws the ConfigurationError itself (never a wrapped
 * failure) where the browser lacks Web Locks or IndexedDB, or for an empty key: never a per-tab cache.
 *
 * @example
 * ```ts
 * const tokenCache = browserTokenCache({ key: "my-app" })
 * ```
 *
 * @since 2.0.0
 * @category browser
 */
export const browserTokenCache = (options?: BrowserOptions): TokenCache => {
  const exit = Effect.runSyncExit(browser(options))
  if (Exit.isSuccess(exit)) return exit.value
  throw Cause.squash(exit.cause)
}
