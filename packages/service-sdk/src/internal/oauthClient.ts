/**
 * The OAuth protocol steps (RFC 6749 §4.1, §4.4, §6; RFC 7636), one function each, over the shared token-endpoint
 * exchange: nothing cached, nothing owned. `OAuthClient.ts` declares the service; `AuthorizationCode` and
 * `ClientCredentials` add token ownership (cache, single flight, renewal) on top of it.
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Pkce from "../Pkce.js"
import { AuthenticationError, ConfigurationError } from "../ServiceError.js"
import type { TokenInfo } from "../TokenInfo.js"
import type * as HttpClient from "@effect/platform/HttpClient"
import { ENV, normalizeScope, type ResolvedProtocol, secretValue } from "./config.js"
import type {
  AuthorizationUrlOptions,
  BeginAuthorizationOptions,
  ExchangeCodeOptions,
  PendingAuthorization,
  PendingInput,
  ScopeOptions,
  Service
} from "../OAuthClient.js"
import { cleanUntrustedText } from "@service-sdk/shared/redact"
import { defaultIssuer, issuerRefusal } from "@service-sdk/shared/issuer"
import { randomState } from "@service-sdk/shared/pkce"
import * as SignIn from "./signIn.js"
import * as TokenEndpoint from "./tokenEndpoint.js"
import { derivedToken } from "./derivedToken.js"

const authFailure = (message: string, payload?: AuthenticationError["payload"]) =>
  new AuthenticationError({ message, payload })

/** The query of an authorization response: a full URL or a bare query string (with or without `?`). */
const callbackQuery = (url: unknown): Effect.Effect<URLSearchParams, AuthenticationError> => {
  if (typeof url !== "string") return Effect.fail(authFailure("the authorization response must be a URL string"))
  const trimmed = url.trim()
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    return URL.canParse(trimmed)
      ? Effect.succeed(new URL(trimmed).searchParams)
      : Effect.fail(authFailure("the authorization response is not a valid URL"))
  }
  return Effect.succeed(new URLSearchParams(trimmed.startsWith("?") ? trimmed.slice(1) : trimmed))
}

/** The parameters of an authorization response that must appear at most once (RFC 6749 §3.1, RFC 9207 §2). */
const SINGLE_PARAMETERS = ["state", "code", "error", "iss"] as const

/**
 * RFC 6749 §3.1: response parameters must not be included more than once. Checked first: `?state=<right>&state=evil`
 * or `?code=<c>&code=<attacker>` must not pass on whichever copy a reader happens to take.
 */
const checkSingleParameters = (query: URLSearchParams): Effect.Effect<void, AuthenticationError> => {
  const repeated = SINGLE_PARAMETERS.find((name) => query.getAll(name).length > 1)
  return repeated === undefined
    ? Effect.void
    : Effect.fail(
        authFailure(
          `the authorization response repeats the ${repeated} parameter (RFC 6749 §3.1): refused, possibly forged`,
          { error: "invalid_request", error_description: `repeated parameter: ${repeated}` }
        )
      )
}

/**
 * RFC 9207 §2.4: an `iss` parameter, when present, must equal the issuer the client expects (simple string
 * comparison, `shared/issuer.ts`); a response from another authorization server (a mix-up attack) is refused, and so
 * is one without `iss` when `requireIss` is set. Without an expected issuer there is nothing to compare with.
 */
const checkIssuer = (
  query: URLSearchParams,
  issuer: string | undefined,
  requireIss: boolean
): Effect.Effect<void, AuthenticationError> => {
  const refusal = issuerRefusal(query.get("iss"), issuer, requireIss)
  return refusal === undefined ? Effect.void : Effect.fail(authFailure(refusal.message, { ...refusal.payload }))
}

/** RFC 6749 §10.12 (CSRF): a missing or different state is refused before anything else of the answer is read. */
const checkState = (query: URLSearchParams, expected: string | undefined): Effect.Effect<void, AuthenticationError> => {
  if (expected === undefined) return Effect.void
  const state = query.get("state")
  if (state === expected) return Effect.void
  return Effect.fail(
    authFailure(
      state === null
        ? "state mismatch: the authorization response has no state (expected one): possible CSRF"
        : "state mismatch: the authorization response's state does not match the one sent: possible CSRF"
    )
  )
}

/** The longest `error` code kept (RFC 6749 §4.1.2.1 codes are short ASCII words). */
const MAX_ERROR_CODE = 64

/** RFC 6749 §4.1.2: an `error` parameter (§4.1.2.1) fails, with its text cleaned and capped; else the code. */
const readCode = (query: URLSearchParams): Effect.Effect<string, AuthenticationError> => {
  const rawError = query.get("error")
  if (rawError !== null) {
    const error = cleanUntrustedText(rawError, MAX_ERROR_CODE)
    const rawDescription = query.get("error_description")
    const description = rawDescription === null ? undefined : cleanUntrustedText(rawDescription)
    return Effect.fail(
      authFailure(`authorization failed: ${error}${description ? ` (${description})` : ""}`, {
        error,
        ...(description !== undefined ? { error_description: description } : {})
      })
    )
  }
  const code = query.get("code")
  return code === null || code === ""
    ? Effect.fail(authFailure("the authorization response has no code"))
    : Effect.succeed(code)
}

/**
 * The checks of an authorization response before its code is read, in order: a repeated `state`, `code`, `error` or
 * `iss`; `expectedState` given and the state differs or is missing; an `iss` that is not `issuer`, or (with
 * `requireIss`) none.
 */
const checkResponse = (
  query: URLSearchParams,
  expectedState: string | undefined,
  issuer: string | undefined,
  requireIss: boolean
): Effect.Effect<void, AuthenticationError> =>
  checkSingleParameters(query).pipe(
    Effect.zipRight(checkState(query, expectedState)),
    Effect.zipRight(checkIssuer(query, issuer, requireIss))
  )

/**
 * The code from the URL the authorization server redirected to (RFC 6749 §4.1.2). Rules, in order: a repeated
 * `state`, `code`, `error` or `iss`; `expectedState` given and the state differs or is missing; `issuer` given and an
 * `iss` that differs, or `requireIss` and no `iss`; an `error` parameter; no `code`.
 */
export const parseResponseUrl = (
  url: string,
  options: ParseResponseUrlOptions = {}
): Effect.Effect<string, AuthenticationError> =>
  Effect.flatMap(callbackQuery(url), (query) =>
    Effect.zipRight(
      checkResponse(query, options?.expectedState, options?.issuer, options?.requireIss === true),
      readCode(query)
    )
  )

/** The checks `parseResponseUrl` makes beside the code's: the state sent, the issuer (RFC 9207). */
export interface ParseResponseUrlOptions {
  readonly expectedState?: string | undefined
  /** The issuer an `iss` must equal (simple string comparison). */
  readonly issuer?: string | undefined
  /** Refuse a response without `iss` (RFC 9207 §2.4; for a server that sends it). Default false. */
  readonly requireIss?: boolean | undefined
}

/** What the protocol steps need beside the token endpoint (which holds the client's credentials). */
export interface ProtocolConfig {
  readonly clientId: string
  readonly authUrl: string
  /** A client without a secret (RFC 6749 §2.1): code exchanges must use PKCE, no client credentials grant. */
  readonly publicClient: boolean
  readonly redirectUri: string | undefined
  readonly scope: string | undefined
  /** The `iss` an authorization response may carry (RFC 9207); default the `authUrl` without a trailing slash. */
  readonly issuer?: string | undefined
  /** Whether an authorization response without `iss` is refused (RFC 9207 §2.4). Default false. */
  readonly requireIss?: boolean | undefined
  /** How long a sign-in lasts when the token endpoint does not say (`refresh_token_expires_in`). */
  readonly refreshTokenLifetime?: Duration.Duration | undefined
}

/** The protocol steps of one client over `endpoint`. */
export const make = (config: ProtocolConfig, endpoint: TokenEndpoint.TokenEndpoint): Service => {
  const { publicClient } = config
  const issuer = config.issuer ?? defaultIssuer(config.authUrl)
  const requireIss = config.requireIss === true

  // RFC 6749 §4.1.1, RFC 7636 §4.3
  const authorizationUrl = (options: AuthorizationUrlOptions & { readonly redirectUri?: string | undefined } = {}) => {
    const params = new URLSearchParams({ response_type: "code", client_id: config.clientId })
    const redirectUri = options.redirectUri ?? config.redirectUri
    if (redirectUri !== undefined) params.set("redirect_uri", redirectUri)
    const scope = options.scope !== undefined ? normalizeScope(options.scope) : config.scope
    if (scope !== undefined) params.set("scope", scope)
    if (options.state !== undefined && options.state !== "") params.set("state", options.state)
    if (options.showDialog === true) params.set("show_dialog", "true")
    if (options.codeChallenge !== undefined && options.codeChallenge !== "") {
      params.set("code_challenge", options.codeChallenge)
      params.set("code_challenge_method", "S256")
    }
    if (options.loginHint !== undefined && options.loginHint !== "") params.set("login_hint", options.loginHint)
    return `${config.authUrl}/authorize?${params.toString()}`
  }

  // RFC 9700 §2.1.1: PKCE for every client kind
  const beginAuthorization = (options: BeginAuthorizationOptions = {}) =>
    Effect.gen(function* () {
      const state =
        options.state !== undefined && options.state !== "" ? options.state : yield* Effect.sync(randomState)
      const pkce = yield* Pkce.make
      const url = authorizationUrl({
        state,
        scope: options.scope,
        showDialog: options.showDialog,
        loginHint: options.loginHint,
        codeChallenge: pkce.challenge,
        redirectUri: options.redirectUri
      })
      return {
        url,
        state,
        codeVerifier: pkce.verifier,
        ...(options.redirectUri !== undefined ? { redirectUri: options.redirectUri } : {})
      } satisfies PendingAuthorization
    })

  // RFC 6749 §4.1.3
  const exchangeCode = Effect.fn("OAuthClient.exchangeCode")(function* (
    code: string,
    // RFC 6749 §4.1.3: the redirect URI of the authorization request, when it was not the configured one
    options: ExchangeCodeOptions & { readonly redirectUri?: string | undefined } = {}
  ) {
    if (typeof code !== "string") {
      return yield* new ConfigurationError({ message: "the authorization code must be a string" })
    }
    if (code.trim() === "") return yield* new ConfigurationError({ message: "the authorization code is empty" })
    const verifier = secretValue(options?.codeVerifier)
    if (verifier !== undefined && (typeof verifier !== "string" || verifier.trim() === "")) {
      return yield* new ConfigurationError({ message: "codeVerifier is empty" })
    }
    if (verifier === undefined && publicClient) {
      return yield* new ConfigurationError({
        message: "public clients must use PKCE: pass the codeVerifier (or sign in with beginAuthorization)"
      })
    }
    const redirectUri = options?.redirectUri ?? config.redirectUri
    if (redirectUri === undefined) {
      return yield* new ConfigurationError({
        message: `missing redirectUri: pass the \`redirectUri\` option or set ${ENV.redirectUri}`
      })
    }
    const token = yield* endpoint({
      grant_type: "authorization_code",
      code: Redacted.make(code.trim()),
      redirect_uri: redirectUri,
      code_verifier: verifier !== undefined ? Redacted.make(verifier) : undefined
    })
    if (token.refreshToken === undefined) {
      return yield* authFailure("the code exchange returned no refresh_token", {
        error: "invalid_token_response",
        error_description: "missing refresh_token"
      })
    }
    // the user signed in now: the entry records it, and when the sign-in ends (refresh tokens that expire)
    return SignIn.signedIn(token, (yield* Clock.currentTimeMillis) / 1000, config.refreshTokenLifetime)
  })

  const completeAuthorization = Effect.fn("OAuthClient.completeAuthorization")(function* (
    callbackUrl: string,
    pending: PendingInput
  ) {
    if (typeof pending?.state !== "string" || pending.state === "") {
      return yield* new ConfigurationError({
        message: "completeAuthorization needs the pending state from beginAuthorization"
      })
    }
    const query = yield* callbackQuery(callbackUrl)
    yield* checkResponse(query, pending.state, issuer, requireIss)
    const code = yield* readCode(query)
    return yield* exchangeCode(code, { codeVerifier: pending.codeVerifier, redirectUri: pending.redirectUri })
  })

  // RFC 6749 §6: a response without a refresh token keeps the one sent
  const refresh = Effect.fn("OAuthClient.refresh")(function* (
    refreshToken: string | Redacted.Redacted<string>,
    options: ScopeOptions = {}
  ) {
    const value = secretValue(refreshToken)
    if (typeof value !== "string" || value.trim() === "") {
      return yield* authFailure("no refresh token to renew with")
    }
    const sent = Redacted.make(value)
    const token = yield* endpoint({
      grant_type: "refresh_token",
      refresh_token: sent,
      scope: normalizeScope(options?.scope)
    })
    return token.refreshToken === undefined ? withRefreshToken(token, sent) : token
  })

  // RFC 6749 §4.4: a confidential client only (§2.1)
  const clientCredentials = Effect.fn("OAuthClient.clientCredentials")(function* (options: ScopeOptions = {}) {
    if (publicClient) {
      return yield* authFailure("a public client cannot use the client credentials grant (RFC 6749 §4.4)", {
        error: "unauthorized_client",
        error_description: "the client credentials grant needs a confidential client"
      })
    }
    const scope = options?.scope !== undefined ? normalizeScope(options.scope) : config.scope
    return yield* endpoint({ grant_type: "client_credentials", scope })
  })

  return { authorizationUrl, beginAuthorization, completeAuthorization, exchangeCode, refresh, clientCredentials }
}

/** The protocol steps of a resolved client on `httpClient` (the token endpoint bound to its credentials). */
export const fromResolved = (resolved: ResolvedProtocol, httpClient: HttpClient.HttpClient): Service =>
  make({ ...resolved, publicClient: resolved.clientSecret === undefined }, TokenEndpoint.make(resolved, httpClient))

const withRefreshToken = (token: TokenInfo, refreshToken: Redacted.Redacted<string>): TokenInfo =>
  derivedToken({ ...token, refreshToken })
