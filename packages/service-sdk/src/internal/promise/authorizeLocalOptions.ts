/**
 * The options of `authorizeLocal` for plain code, and their translation to the Effect options.
 */
import * as Effect from "effect/Effect"
import type { AuthorizeLocalOptions } from "../../authorizeLocal.js"

/**
 * The options of `authorizeLocal`; `onAuthorizationUrl` may return a Promise (the flow fails with its rejection).
 *
 * @since 1.0.0
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

/** The Effect options of `authorizeLocal`. */
export const toEffectOptions = (options: AsyncAuthorizeLocalOptions = {}): AuthorizeLocalOptions => {
  const { onAuthorizationUrl, ...rest } = options
  return onAuthorizationUrl === undefined ? rest : { ...rest, onAuthorizationUrl: toEffectCallback(onAuthorizationUrl) }
}
