import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { SignInOptions, SignInTokens } from "../Emulator.js"
import { EmulatorError } from "../EmulatorError.js"
import { SCOPES } from "./fixtures.js"
import { parseScope, refreshTokenExpiry } from "./oauth.js"
import { type EmulatorState, isUserId } from "./state.js"

const invalid = (message: string) => Effect.fail(new EmulatorError({ message: `Invalid signIn: ${message}` }))

const ALL_SCOPES = [...SCOPES.keys()].join(" ")

/**
 * Signs a user in without the consent page, as if they had approved and the code had been exchanged: a new grant
 * with an access token and a refresh token. Not counted in the token request stats (no request was made).
 *
 * @internal
 */
export const signIn = (state: EmulatorState, options: SignInOptions): Effect.Effect<SignInTokens, EmulatorError> =>
  Effect.suspend(() => {
    const userId: unknown = options?.userId
    if (!isUserId(userId)) {
      return invalid("userId must be 1 to 64 characters from A-Z, a-z, 0-9, _ and -")
    }
    const clientId = options.clientId ?? state.options.defaultClient.clientId
    if (!state.options.clients.has(clientId)) return invalid(`unknown client ${String(clientId)}`)
    const raw =
      options.scope === undefined
        ? ALL_SCOPES
        : typeof options.scope === "string"
          ? options.scope
          : options.scope.join(" ")
    const parsed = parseScope(raw)
    if ("invalid" in parsed) return invalid(`unknown scope ${parsed.invalid}`)
    const lifetime = options.expiresIn
    if (lifetime !== undefined && !(Number.isInteger(lifetime) && lifetime >= 0 && lifetime <= 31_536_000)) {
      return invalid(`expiresIn must be a whole number of seconds, got ${String(lifetime)}`)
    }
    return Effect.map(Clock.currentTimeMillis, (now) => {
      const grant = state.newGrant(clientId, parsed.scope, userId, now)
      const access = state.issueAccessToken(grant, grant.scope, now, lifetime)
      return {
        access_token: access.token,
        refresh_token: state.issueRefreshToken(grant),
        expires_in: access.expiresIn,
        scope: grant.scope,
        ...refreshTokenExpiry(state.refreshTokenExpiresIn(grant, now))
      }
    })
  })
