/**
 * `authorizeLocal` for plain code: a Promise, with a plain (or async) `onAuthorizationUrl`.
 */
import * as Effect from "effect/Effect"
import { AuthorizationCode } from "../../AuthorizationCode.js"
import { type AuthorizeLocalOptions, authorizeLocal } from "../../authorizeLocal.js"
import type { TokenInfo } from "../../TokenInfo.js"
import type { AsyncAuthorizationCode } from "./asyncProviders.js"

/**
 * The options of `authorizeLocal`; `onAuthorizationUrl` may return a Promise (the flow fails with its rejection).
 *
 * @since 0.1.0
 */
export interface AsyncAuthorizeLocalOptions extends Omit<AuthorizeLocalOptions, "onAuthorizationUrl"> {
  readonly onAuthorizationUrl?: ((url: string) => void | PromiseLike<void> | Effect.Effect<void>) | undefined
}

const isPromiseLike = (u: unknown): u is PromiseLike<void> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

const toEffectCallback =
  (callback: NonNullable<AsyncAuthorizeLocalOptions["onAuthorizationUrl"]>) =>
  (url: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const result = callback(url)
      if (Effect.isEffect(result)) return result
      return isPromiseLike(result) ? Effect.promise(() => result) : Effect.void
    })

/**
 * Runs `authorizeLocal` with `provider` (in its runtime) and resolves to the tokens, also cached by the provider.
 * Rejects with the SDK's error instances (`ConfigurationError`, `AuthenticationError`, ...).
 *
 * ```ts
 * await using auth = new AsyncAuthorizationCode({ redirectUri: "http://127.0.0.1:8080/callback" })
 * await asyncAuthorizeLocal(auth, { scope: ["user-read-private"] })
 * ```
 *
 * @since 0.1.0
 */
export const asyncAuthorizeLocal = (
  provider: AsyncAuthorizationCode,
  options: AsyncAuthorizeLocalOptions = {}
): Promise<TokenInfo> => {
  const { onAuthorizationUrl, ...rest } = options
  const effectOptions: AuthorizeLocalOptions =
    onAuthorizationUrl === undefined ? rest : { ...rest, onAuthorizationUrl: toEffectCallback(onAuthorizationUrl) }
  return provider.runtime.run(
    Effect.provideService(authorizeLocal(effectOptions), AuthorizationCode, provider.authorizationCode)
  )
}
