import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { ClientRegistration } from "../Emulator.js"
import { applyFault } from "./faults.js"
import { SCOPES } from "./fixtures.js"
import { createHash } from "node:crypto"
import { formDecode, json, mediaType, methods, repeatedParameter } from "./http.js"
import { secretEquals } from "./random.js"
import type { EmulatorState, Grant } from "./state.js"

/**
 * An OAuth 2.0 error response (RFC 6749 §5.2).
 *
 * @internal
 */
export class OAuthError extends Data.TaggedError("OAuthError")<{
  readonly status: 400 | 401
  readonly error: string
  readonly description: string
}> {}

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const

const invalidRequest = (description: string) => new OAuthError({ status: 400, error: "invalid_request", description })
const invalidGrant = (description: string) => new OAuthError({ status: 400, error: "invalid_grant", description })
const invalidClient = (description: string) => new OAuthError({ status: 401, error: "invalid_client", description })

/** @internal */
export const oauthErrorResponse = (error: OAuthError): HttpServerResponse.HttpServerResponse =>
  json(
    { error: error.error, error_description: error.description },
    error.status,
    error.status === 401 ? { ...NO_STORE, "www-authenticate": 'Basic realm="emulator", charset="UTF-8"' } : NO_STORE
  )

/**
 * Scope syntax (RFC 6749 §3.3): space-delimited, case-sensitive tokens. Unknown scopes are `invalid_scope`.
 * Returns the normalised scope string (single spaces, duplicates dropped).
 *
 * @internal
 */
export const parseScope = (
  raw: string | null | undefined
): { readonly scope: string } | { readonly invalid: string } => {
  if (raw === null || raw === undefined) return { scope: "" }
  const scopes = new Set<string>()
  for (const item of raw.split(" ")) {
    if (item.length === 0) continue
    if (!SCOPES.has(item)) return { invalid: item }
    scopes.add(item)
  }
  return { scope: [...scopes].join(" ") }
}

/**
 * Client authentication (RFC 6749 §2.3.1): HTTP Basic with the form-encoded id and secret, or `client_id` and
 * `client_secret` in the body; never both. A public client (no secret registered) identifies itself with
 * `client_id` in the body alone (RFC 6749 §3.2.1) and never presents a secret.
 */
const authenticateClient = (
  state: EmulatorState,
  authorization: string | undefined,
  form: URLSearchParams
): Effect.Effect<ClientRegistration, OAuthError> => {
  let clientId: string | undefined
  let clientSecret: string | undefined
  if (authorization !== undefined) {
    const match = /^basic\s+([A-Za-z0-9+/]*={0,2})\s*$/i.exec(authorization)
    if (match === null) return Effect.fail(invalidClient("Unsupported client authentication: use HTTP Basic"))
    const decoded = Buffer.from(match[1]!, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon === -1) return Effect.fail(invalidClient("Malformed HTTP Basic credentials"))
    clientId = formDecode(decoded.slice(0, colon))
    clientSecret = formDecode(decoded.slice(colon + 1))
    if (clientId === undefined || clientSecret === undefined) {
      return Effect.fail(invalidClient("Malformed HTTP Basic credentials"))
    }
    if (form.has("client_secret")) {
      return Effect.fail(invalidRequest("Use only one client authentication method"))
    }
    const bodyId = form.get("client_id")
    if (bodyId !== null && bodyId !== clientId) {
      return Effect.fail(invalidClient("client_id does not match the authenticated client"))
    }
  } else {
    clientId = form.get("client_id") ?? undefined
    clientSecret = form.get("client_secret") ?? undefined
    if (clientId === undefined) return Effect.fail(invalidClient("Client authentication is required"))
  }
  const client = state.options.clients.get(clientId)
  if (client === undefined) return Effect.fail(invalidClient("Invalid client"))
  if (client.clientSecret === undefined) {
    return clientSecret === undefined
      ? Effect.succeed(client)
      : Effect.fail(invalidClient("This is a public client: it has no secret"))
  }
  if (clientSecret === undefined) return Effect.fail(invalidClient("Client authentication is required"))
  if (!secretEquals(client.clientSecret, clientSecret)) return Effect.fail(invalidClient("Invalid client secret"))
  return Effect.succeed(client)
}

/** `refresh_token_expires_in` when refresh tokens end (config `refreshTokenLifetime`). @internal */
export const refreshTokenExpiry = (seconds: number | undefined): { readonly refresh_token_expires_in?: number } =>
  seconds === undefined ? {} : { refresh_token_expires_in: seconds }

const tokenResponse = (body: {
  readonly access_token: string
  readonly expires_in: number
  readonly scope: string
  readonly refresh_token?: string
  readonly refresh_token_expires_in?: number
}): HttpServerResponse.HttpServerResponse =>
  json(
    {
      access_token: body.access_token,
      token_type: "Bearer",
      expires_in: body.expires_in,
      scope: body.scope,
      ...(body.refresh_token === undefined ? {} : { refresh_token: body.refresh_token }),
      ...refreshTokenExpiry(body.refresh_token_expires_in)
    },
    200,
    NO_STORE
  )

/** Client credentials grant (RFC 6749 §4.4): an app token, no user and no refresh token. */
const clientCredentialsGrant = (
  state: EmulatorState,
  client: ClientRegistration,
  form: URLSearchParams,
  now: number
) => {
  if (client.clientSecret === undefined) {
    // RFC 6749 §4.4: the client credentials grant is for confidential clients only
    return Effect.fail(
      new OAuthError({
        status: 400,
        error: "unauthorized_client",
        description: "A public client cannot use the client_credentials grant"
      })
    )
  }
  const parsed = parseScope(form.get("scope"))
  if ("invalid" in parsed) {
    return Effect.fail(
      new OAuthError({ status: 400, error: "invalid_scope", description: `Invalid scope: ${parsed.invalid}` })
    )
  }
  const grant = state.newGrant(client.clientId, parsed.scope, undefined, now)
  const access = state.issueAccessToken(grant, grant.scope, now)
  return Effect.succeed(tokenResponse({ access_token: access.token, expires_in: access.expiresIn, scope: grant.scope }))
}

/**
 * PKCE verification (RFC 7636 §4.6): `BASE64URL(SHA256(ASCII(code_verifier)))` must equal the S256 challenge. A
 * verifier for a code issued without a challenge is refused too (RFC 9700 §2.1.1, PKCE downgrade). A wrong verifier
 * does not use the code up, like the other failed exchanges. Returns the error description, if any.
 */
const verifyPkce = (challenge: string | undefined, verifier: string | null): string | undefined => {
  if (challenge === undefined) {
    return verifier === null ? undefined : "code_verifier sent for a code issued without code_challenge"
  }
  if (verifier === null || verifier === "") return "Missing code_verifier"
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return "Malformed code_verifier"
  const computed = createHash("sha256").update(verifier, "ascii").digest("base64url")
  return secretEquals(computed, challenge) ? undefined : "code_verifier does not match the code_challenge"
}

/** Authorization code grant, token request (RFC 6749 §4.1.3): single-use code, bound to client and redirect URI. */
const authorizationCodeGrant = (
  state: EmulatorState,
  client: ClientRegistration,
  form: URLSearchParams,
  now: number
) => {
  const code = form.get("code")
  if (code === null || code === "") return Effect.fail(invalidRequest("Missing parameter: code"))
  const redirectUri = form.get("redirect_uri")
  if (redirectUri === null || redirectUri === "") return Effect.fail(invalidRequest("Missing parameter: redirect_uri"))
  const entry = state.codes.get(code)
  if (entry === undefined || entry.clientId !== client.clientId) {
    return Effect.fail(invalidGrant("Invalid authorization code"))
  }
  if (entry.redeemedBy !== undefined) {
    // RFC 6749 §4.1.2: a reused code is denied and the tokens issued for it are revoked
    state.revokeGrant(entry.redeemedBy)
    return Effect.fail(invalidGrant("Authorization code already used"))
  }
  if (now >= entry.expiresAt) {
    state.codes.delete(code)
    return Effect.fail(invalidGrant("Authorization code expired"))
  }
  if (entry.redirectUri !== redirectUri) return Effect.fail(invalidGrant("Invalid redirect URI"))
  const pkce = verifyPkce(entry.codeChallenge, form.get("code_verifier"))
  if (pkce !== undefined) return Effect.fail(invalidGrant(pkce))
  const grant = state.newGrant(client.clientId, entry.scope, entry.userId, now)
  entry.redeemedBy = grant
  const access = state.issueAccessToken(grant, grant.scope, now)
  const refreshToken = state.issueRefreshToken(grant)
  return Effect.succeed(
    tokenResponse({
      access_token: access.token,
      expires_in: access.expiresIn,
      scope: grant.scope,
      refresh_token: refreshToken,
      ...refreshTokenExpiry(state.refreshTokenExpiresIn(grant, now))
    })
  )
}

/** Refreshing an access token (RFC 6749 §6): same or narrower scope; rotation only when configured. */
const refreshTokenGrant = (state: EmulatorState, client: ClientRegistration, form: URLSearchParams, now: number) => {
  const refreshToken = form.get("refresh_token")
  if (refreshToken === null || refreshToken === "") {
    return Effect.fail(invalidRequest("Missing parameter: refresh_token"))
  }
  const grant: Grant | undefined = state.refreshTokens.get(refreshToken)
  if (grant === undefined || grant.clientId !== client.clientId) {
    return Effect.fail(invalidGrant("Invalid refresh token"))
  }
  // the Service's refresh tokens end a fixed time after sign-in; refreshing does not extend them
  const expiresIn = state.refreshTokenExpiresIn(grant, now)
  if (expiresIn === 0) return Effect.fail(invalidGrant("Refresh token expired"))
  let scope = grant.scope
  const requested = form.get("scope")
  if (requested !== null) {
    const parsed = parseScope(requested)
    const narrowed = "scope" in parsed ? parsed.scope.split(" ").filter((s) => s.length > 0) : []
    if ("invalid" in parsed || narrowed.some((s) => !grant.scopes.has(s))) {
      return Effect.fail(
        new OAuthError({ status: 400, error: "invalid_scope", description: "Scope exceeds the original grant" })
      )
    }
    if (narrowed.length > 0) scope = narrowed.join(" ")
  }
  const access = state.issueAccessToken(grant, scope, now)
  let rotated: string | undefined
  if (state.config.rotateRefreshTokens) {
    state.refreshTokens.delete(refreshToken)
    rotated = state.issueRefreshToken(grant)
  }
  return Effect.succeed(
    tokenResponse({
      access_token: access.token,
      expires_in: access.expiresIn,
      scope,
      ...(rotated === undefined ? {} : { refresh_token: rotated }),
      ...refreshTokenExpiry(expiresIn)
    })
  )
}

const exchange = (
  state: EmulatorState,
  authorization: string | undefined,
  form: URLSearchParams | undefined,
  contentTypeOk: boolean
): Effect.Effect<HttpServerResponse.HttpServerResponse, OAuthError> =>
  Effect.suspend(() => {
    if (!contentTypeOk) {
      return Effect.fail(invalidRequest("Content-Type must be application/x-www-form-urlencoded"))
    }
    if (form === undefined) return Effect.fail(invalidRequest("Malformed request body"))
    const repeated = repeatedParameter(form)
    if (repeated !== undefined) return Effect.fail(invalidRequest(`Parameter repeated: ${repeated}`))
    return Effect.flatMap(authenticateClient(state, authorization, form), (client) => {
      const grantType = form.get("grant_type")
      if (grantType === null || grantType === "") {
        return Effect.fail(invalidRequest("Missing parameter: grant_type"))
      }
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        switch (grantType) {
          case "client_credentials":
            return clientCredentialsGrant(state, client, form, now)
          case "authorization_code":
            return authorizationCodeGrant(state, client, form, now)
          case "refresh_token":
            return refreshTokenGrant(state, client, form, now)
          default:
            return Effect.fail(
              new OAuthError({
                status: 400,
                error: "unsupported_grant_type",
                description: `Unsupported grant_type: ${grantType}`
              })
            )
        }
      })
    })
  })

const decodeForm = (body: string): URLSearchParams | undefined => {
  // URLSearchParams never throws; reject bodies whose percent-escapes are broken, as a strict server does
  if (/%(?![0-9A-Fa-f]{2})/.test(body)) return undefined
  return new URLSearchParams(body)
}

/**
 * `POST /api/token`: counts the request, applies latency and queued faults, then the token exchange.
 *
 * @internal
 */
export const tokenEndpoint = (state: EmulatorState) =>
  methods(
    {
      POST: Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const contentTypeOk = mediaType(request.headers["content-type"]) === "application/x-www-form-urlencoded"
        const body = yield* Effect.orElseSucceed(request.text, () => undefined)
        const form = contentTypeOk && body !== undefined ? decodeForm(body) : undefined
        state.recordTokenRequest(form?.get("grant_type") ?? undefined)
        if (state.options.tokenLatencyMs > 0) {
          yield* Effect.sleep(state.options.tokenLatencyMs)
        }
        const normal = exchange(state, request.headers.authorization, form, contentTypeOk).pipe(
          Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthErrorResponse(error)))
        )
        const fault = state.takeFault("token")
        return yield* fault === undefined ? normal : applyFault(fault, normal)
      })
    },
    (allow, method) =>
      json({ error: "invalid_request", error_description: `Method ${method} not allowed; use ${allow}` }, 405, {
        ...NO_STORE,
        allow
      })
  )
