/**
 * `authorizeLocal` for plain code: a Promise, with a plain (or async) `onAuthorizationUrl`.
 */
import { ConfigurationError } from "../../ServiceError.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { AsyncAuthorizationCode } from "./asyncProviders.js"
import type { AsyncAuthorizeLocalOptions } from "./authorizeLocalOptions.js"

export type { AsyncAuthorizeLocalOptions } from "./authorizeLocalOptions.js"

/**
 * Runs `authorizeLocal` with `provider` (in its runtime) and resolves to the tokens, also cached by the provider.
 * Rejects with the SDK's error instances (`ConfigurationError`, `AuthenticationError`, ...). The same as
 * `provider.authorizeLocal(options)`.
 *
 * ```ts
 * await using auth = new AsyncAuthorizationCode({ redirectUri: "http://127.0.0.1:8080/callback" })
 * await asyncAuthorizeLocal(auth, { scope: ["user-read-private"] })
 * ```
 *
 * @since 2.0.0
 */
export const asyncAuthorizeLocal = (
  provider: AsyncAuthorizationCode,
  options: AsyncAuthorizeLocalOptions = {}
): Promise<TokenInfo> =>
  provider instanceof AsyncAuthorizationCode
    ? provider.authorizeLocal(options)
    : Promise.reject(new ConfigurationError({ message: "asyncAuthorizeLocal takes an AsyncAuthorizationCode" }))
