/**
 * The browser's half of a redirect sign-in: where the pending sign-in waits for the redirect (the tab's
 * `sessionStorage`), and the address bar cleaned of the callback's parameters.
 */
import * as Effect from "effect/Effect"
import { AuthenticationError, ConfigurationError } from "../../ServiceError.js"

/** The sessionStorage key of the pending sign-in named `key`. */
export const storageKey = (key: string): string => `service-sdk/pending-sign-in/${key}`

/** The parameters an authorization response may carry (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207). */
export const CALLBACK_PARAMETERS: ReadonlyArray<string> = [
  "code",
  "state",
  "iss",
  "error",
  "error_description",
  "error_uri"
]

/** What survives the redirect: the state and verifier (and a sign-in's own redirect URI). */
export interface StoredPending {
  readonly state: string
  readonly codeVerifier: string
  readonly redirectUri?: string | undefined
}

export const checkedKey = (key: string | undefined, name: string) =>
  key === undefined
    ? Effect.succeed("default")
    : typeof key === "string" && key !== ""
      ? Effect.succeed(key)
      : Effect.fail(new ConfigurationError({ message: `${name}: key must be a non-empty string` }))

/** The tab's sessionStorage, or a ConfigurationError where there is none (Node, a sandboxed frame). */
export const sessionStorageOf = (name: string): Effect.Effect<Storage, ConfigurationError> =>
  Effect.suspend(() => {
    try {
      const storage = (globalThis as { readonly sessionStorage?: Storage }).sessionStorage
      if (storage !== undefined && typeof storage.getItem === "function") return Effect.succeed(storage)
    } catch {
      // a sandboxed frame throws SecurityError on access: no storage
    }
    return Effect.fail(
      new ConfigurationError({
        message: `${name} needs the tab's sessionStorage (a browser page), which this environment lacks`
      })
    )
  })

export const save = (storage: Storage, key: string, pending: StoredPending, name: string) =>
  Effect.try({
    try: () => storage.setItem(storageKey(key), JSON.stringify(pending)),
    catch: () => new ConfigurationError({ message: `${name}: the pending sign-in could not be kept in sessionStorage` })
  })

/** The pending sign-in, or an AuthenticationError when this tab has none (a callback nobody started here). */
export const load = (storage: Storage, key: string): Effect.Effect<StoredPending, AuthenticationError> =>
  Effect.suspend(() => {
    const none = (why: string) =>
      Effect.fail(
        new AuthenticationError({
          message: `${why}: sign in again`,
          payload: { error: "invalid_request", error_description: why }
        })
      )
    let text: string | null
    try {
      text = storage.getItem(storageKey(key))
    } catch {
      text = null
    }
    if (text === null)
      return none("no sign-in is pending in this tab (it was completed already, or never started here)")
    try {
      const value = JSON.parse(text) as Partial<StoredPending>
      if (typeof value.state === "string" && typeof value.codeVerifier === "string") {
        return Effect.succeed({
          state: value.state,
          codeVerifier: value.codeVerifier,
          ...(typeof value.redirectUri === "string" ? { redirectUri: value.redirectUri } : {})
        })
      }
    } catch {
      // unreadable: as none
    }
    return none("the pending sign-in in this tab is unreadable")
  })

export const forget = (storage: Storage, key: string) =>
  Effect.sync(() => {
    try {
      storage.removeItem(storageKey(key))
    } catch {
      // nothing to forget
    }
  })

/** The current address without the callback's parameters (so no code stays in the history), when it is `url`. */
export const cleanAddressBar = (url: string) =>
  Effect.sync(() => {
    const location = (globalThis as { readonly location?: Location }).location
    const history = (globalThis as { readonly history?: History }).history
    if (location === undefined || history === undefined || location.href !== url) return
    try {
      const clean = new URL(url)
      for (const name of CALLBACK_PARAMETERS) clean.searchParams.delete(name)
      history.replaceState(history.state, "", clean.href)
    } catch {
      // the address stays as it is
    }
  })

/** The current page's address, or a ConfigurationError outside a page. */
export const currentUrl = (name: string): Effect.Effect<string, ConfigurationError> =>
  Effect.suspend(() => {
    const href = (globalThis as { readonly location?: { readonly href?: unknown } }).location?.href
    return typeof href === "string"
      ? Effect.succeed(href)
      : Effect.fail(new ConfigurationError({ message: `${name}: pass the callback URL (there is no page location)` }))
  })
