import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { USER } from "./fixtures.js"
import { consentPage, errorPage } from "./html.js"
import { mediaType, methods, query, repeatedParameter } from "./http.js"
import { parseScope } from "./oauth.js"
import { randomToken } from "./random.js"
import { CODE_LIFETIME_MS, type EmulatorState, isUserId } from "./state.js"

/** The loopback IP literals a plain-`http` redirect URI may use: never `localhost` (RFC 8252 §8.3). */
const LOOPBACK_LITERALS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]"])

const parseUrl = (raw: string): URL | undefined => {
  try {
    return new URL(raw)
  } catch {
    return undefined
  }
}

/**
 * The Service's redirect URI rules (since 2025-11-27; RFC 8252 §7.3, §8.3): `https`, or `http` on a loopback IP
 * literal; no fragment or credentials (RFC 6749 §3.1.2). `localhost` is refused. The reason, or undefined when fine.
 *
 * @internal
 */
export const redirectUriError = (raw: string): string | undefined => {
  const url = raw.includes("#") ? undefined : parseUrl(raw)
  if (url === undefined || url.username !== "" || url.password !== "") {
    return "Invalid redirect URI: not an absolute URI without fragment or credentials"
  }
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && LOOPBACK_LITERALS.has(url.hostname)) return undefined
  if (url.protocol === "http:" && url.hostname === "localhost") {
    return "Invalid redirect URI: localhost is not allowed, use a loopback IP literal (127.0.0.1 or [::1])"
  }
  return "Invalid redirect URI: it must be https, or http on a loopback IP literal (127.0.0.1 or [::1])"
}

/**
 * Whether a client with no registered redirect URIs may use `raw`: `http` on a loopback IP literal, any port.
 *
 * @internal
 */
export const isLoopbackRedirectUri = (raw: string): boolean =>
  redirectUriError(raw) === undefined && parseUrl(raw)!.protocol === "http:"

/**
 * Whether `raw` matches a registered redirect URI: exactly, or, for a loopback URI registered without a port, with
 * any port (RFC 8252 §7.3: the port of a loopback redirect is chosen at sign-in).
 *
 * @internal
 */
export const matchesRegistered = (registered: string, raw: string): boolean => {
  if (registered === raw) return true
  const expected = parseUrl(registered)
  const actual = parseUrl(raw)
  if (expected === undefined || actual === undefined) return false
  if (expected.protocol !== "http:" || !LOOPBACK_LITERALS.has(expected.hostname) || expected.port !== "") return false
  return (
    actual.protocol === "http:" &&
    actual.hostname === expected.hostname &&
    actual.pathname === expected.pathname &&
    actual.search === expected.search &&
    actual.port !== ""
  )
}

/** Authorization response (RFC 6749 §4.1.2): back to the client's redirect URI, keeping its own query. */
const redirectTo = (redirectUri: string, params: Record<string, string | undefined>) => {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(key, value)
  }
  return HttpServerResponse.redirect(url.toString(), { status: 302, headers: { "cache-control": "no-store" } })
}

const issueCode = (
  state: EmulatorState,
  request: {
    readonly clientId: string
    readonly redirectUri: string
    readonly scope: string
    readonly codeChallenge: string | undefined
  },
  userId: string,
  now: number
): string => {
  const code = randomToken()
  state.codes.set(code, {
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    scope: request.scope,
    codeChallenge: request.codeChallenge,
    userId,
    expiresAt: now + CODE_LIFETIME_MS,
    redeemedBy: undefined
  })
  return code
}

/** S256 challenges are base64url SHA-256 digests: 43 characters (RFC 7636 §4.2). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/**
 * PKCE parameters of an authorization request (RFC 7636 §4.3, §4.4.1): only S256 (`plain`, and a challenge
 * without a method, which means `plain`, are refused, RFC 9700 §2.1.1); a public client, or any client when
 * `requirePkce` is on, must send a challenge.
 */
const pkceChallenge = (
  state: EmulatorState,
  isPublic: boolean,
  params: URLSearchParams
): { readonly challenge: string | undefined } | { readonly invalid: string } => {
  const challenge = params.get("code_challenge")
  const method = params.get("code_challenge_method")
  if (challenge === null || challenge === "") {
    if (method !== null) return { invalid: "code_challenge_method without code_challenge" }
    if (isPublic) return { invalid: "Public clients must use PKCE: code_challenge is required" }
    if (state.config.requirePkce) return { invalid: "PKCE is required: code_challenge is missing" }
    return { challenge: undefined }
  }
  if (method !== "S256") {
    return { invalid: `Unsupported code_challenge_method ${method ?? "plain"}: only S256 is supported` }
  }
  if (!S256_CHALLENGE.test(challenge)) return { invalid: "Malformed code_challenge" }
  return { challenge }
}

const methodNotAllowedPage = (allow: string, method: string) =>
  HttpServerResponse.setHeader(
    errorPage(405, "method_not_allowed", `Method ${method} is not allowed here; use ${allow}.`),
    "allow",
    allow
  )

/**
 * `GET /authorize`: validates the client and redirect URI (errors are shown, never redirected), then redirects errors
 * in the other parameters, and shows the consent page (or approves at once with `autoApprove`).
 *
 * @internal
 */
export const authorizeEndpoint = (state: EmulatorState) =>
  methods(
    {
      GET: Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const params = query(request.url)
        const repeated = repeatedParameter(params)
        if (repeated !== undefined) {
          return errorPage(400, "invalid_request", `Parameter repeated: ${repeated}`)
        }
        const clientId = params.get("client_id")
        if (clientId === null || clientId === "") {
          return errorPage(400, "invalid_request", "Missing required parameter: client_id")
        }
        const client = state.options.clients.get(clientId)
        if (client === undefined) return errorPage(400, "invalid_client", "Invalid client")
        const redirectUri = params.get("redirect_uri")
        if (redirectUri === null || redirectUri === "") {
          return errorPage(400, "invalid_request", "Missing required parameter: redirect_uri")
        }
        const invalidRedirect = redirectUriError(redirectUri)
        if (invalidRedirect !== undefined) return errorPage(400, "invalid_request", invalidRedirect)
        if (client.redirectUris === undefined && !isLoopbackRedirectUri(redirectUri)) {
          return errorPage(400, "invalid_request", "Invalid redirect URI: not registered for this client")
        }
        if (
          client.redirectUris !== undefined &&
          !client.redirectUris.some((registered) => matchesRegistered(registered, redirectUri))
        ) {
          return errorPage(400, "invalid_request", "Invalid redirect URI: not registered for this client")
        }
        const stateParam = params.get("state") ?? undefined
        const responseType = params.get("response_type")
        if (responseType === null || responseType === "") {
          return redirectTo(redirectUri, {
            error: "invalid_request",
            error_description: "Missing required parameter: response_type",
            state: stateParam
          })
        }
        if (responseType !== "code") {
          return redirectTo(redirectUri, {
            error: "unsupported_response_type",
            error_description: "Only response_type=code is supported",
            state: stateParam
          })
        }
        const parsed = parseScope(params.get("scope"))
        if ("invalid" in parsed) {
          return redirectTo(redirectUri, {
            error: "invalid_scope",
            error_description: `Invalid scope: ${parsed.invalid}`,
            state: stateParam
          })
        }
        const pkce = pkceChallenge(state, client.clientSecret === undefined, params)
        if ("invalid" in pkce) {
          return redirectTo(redirectUri, {
            error: "invalid_request",
            error_description: pkce.invalid,
            state: stateParam
          })
        }
        // many users: `login_hint` names the user to sign in (OpenID Connect Core §3.1.2.1 uses the same name)
        const loginHint = params.get("login_hint")
        if (loginHint !== null && !isUserId(loginHint)) {
          return redirectTo(redirectUri, {
            error: "invalid_request",
            error_description: "Invalid login_hint: a user id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -",
            state: stateParam
          })
        }
        const userId = loginHint ?? USER.id
        const now = yield* Clock.currentTimeMillis
        const pending = { clientId, redirectUri, scope: parsed.scope, codeChallenge: pkce.challenge }
        if (state.config.autoApprove) {
          return redirectTo(redirectUri, { code: issueCode(state, pending, userId, now), state: stateParam })
        }
        const requestId = randomToken(24)
        state.pending.set(requestId, {
          ...pending,
          state: stateParam,
          loginHint: userId,
          expiresAt: now + CODE_LIFETIME_MS
        })
        return consentPage({ ...pending, requestId, user: userId })
      })
    },
    methodNotAllowedPage
  )

/**
 * `POST /authorize/decision` (the consent form): `request_id` and `decision=approve|deny`; redirects with a `code`
 * or `error=access_denied`, and the `state` in both cases.
 *
 * @internal
 */
export const decisionEndpoint = (state: EmulatorState) =>
  methods(
    {
      POST: Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (mediaType(request.headers["content-type"]) !== "application/x-www-form-urlencoded") {
          return errorPage(
            400,
            "invalid_request",
            "The consent form must be posted as application/x-www-form-urlencoded"
          )
        }
        const body = yield* Effect.orElseSucceed(request.text, () => "")
        const form = new URLSearchParams(body)
        const requestId = form.get("request_id") ?? ""
        const pending = state.pending.get(requestId)
        const now = yield* Clock.currentTimeMillis
        if (pending === undefined || now >= pending.expiresAt) {
          state.pending.delete(requestId)
          return errorPage(400, "invalid_request", "This authorization request has expired or was already answered")
        }
        const decision = form.get("decision")
        if (decision !== "approve" && decision !== "deny") {
          return errorPage(400, "invalid_request", "decision must be approve or deny")
        }
        const user = form.get("user") ?? pending.loginHint
        if (decision === "approve" && !isUserId(user)) {
          // the request stays pending: the person can correct the user id and press Approve again
          return errorPage(
            400,
            "invalid_request",
            "Invalid user id: use 1 to 64 characters from A-Z, a-z, 0-9, _ and -. Go back and correct it."
          )
        }
        state.pending.delete(requestId)
        return decision === "approve"
          ? redirectTo(pending.redirectUri, { code: issueCode(state, pending, user, now), state: pending.state })
          : redirectTo(pending.redirectUri, {
              error: "access_denied",
              error_description: "The user denied access",
              state: pending.state
            })
      })
    },
    methodNotAllowedPage
  )
