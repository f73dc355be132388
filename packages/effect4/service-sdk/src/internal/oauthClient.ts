/**
 * The OAuth protocol steps (RFC 6749 §4.1, §4.4, §6; RFC 7636; RFC 9207), one function each, over the shared
 * token-endpoint exchange: nothing cached, nothing owned. `OAuthClient.ts` declares the service.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type {
  AuthorizationUrlOptions,
  BeginAuthorizationOptions,
  PendingAuthorization,
  PendingInput,
  Service
} from "../OAuthClient.js"
import * as Pkce from "../Pkce.js"
import { AuthenticationError, ConfigurationError } from "../ServiceError.js"
import { TokenInfo } from "../TokenInfo.js"
import { ENV, type ResolvedProtocol, normalizeScope, secretValue } from "./config.js"
import * as SignIn from "./signIn.js"
import { randomState } from "@service-sdk/shared/pkce"
import { cleanUntrustedText } from "@service-sdk/shared/redact"
import { issuerRefusal } from "@service-sdk/shared/issuer"
import type * as TokenEndpoint from "./tokenEndpoint.js"

const authFailure = (message: string, payload?: AuthenticationError["payload"]) =>
  new AuthenticationError({ message, ...(payload !== undefined ? { payload } : {}) })

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

/** RFC 6749 §3.1: a response parameter must not be repeated (a second value could pass for the server's). */
const single = (query: URLSearchParams, name: string): Effect.Effect<string | null, AuthenticationError> => {
  const values = query.getAll(name)
  return values.length > 1
    ? Effect.fail(authFailure(`the authorization response repeats the ${name} parameter`))
    : Effect.succeed(values[0] ?? null)
}

/** RFC 6749 §10.12 (CSRF): a missing or different state is refused before anything else of the answer is read. */
const checkState = (query: URLSearchParams, expected: string | undefined) =>
  Effect.gen(function* () {
    const state = yield* single(query, "state")
    if (expected === undefined || state === expected) return
    return yield* authFailure(
      state === null
        ? "state mismatch: the authorization response has no state (expected one): possible CSRF"
        : "state mismatch: the authorization response's state does not match the one sent: possible CSRF"
    )
  })

/**
 * RFC 9207 §2.4: an `iss` parameter, when present, must equal the configured issuer (simple string comparison,
 * `shared/issuer.ts`: the mix-up defence), and with `requireIss` it must be present. Without an expected issuer there
 * is nothing to compare with.
 */
const checkIssuer = (query: URLSearchParams, issuer: string | undefined, requireIss: boolean) =>
  Effect.gen(function* () {
    const refusal = issuerRefusal(yield* single(query, "iss"), issuer, requireIss)
    if (refusal === undefined) return
    return yield* authFailure(refusal.message, { ...refusal.payload })
  })

/** RFC 6749 §4.1.2: an `error` parameter (§4.1.2.1) fails, with its text cleaned and capped; else the code. */
const readCode = (query: URLSearchParams) =>
  Effect.gen(function* () {
    const rawError = yield* single(query, "error")
    const rawCode = yield* single(query, "code")
    if (rawError !== null) {
      const error = cleanUntrustedText(rawError, 64)
      const rawDescription = query.get("error_description")
      const description = rawDescription === null ? undefined : cleanUntrustedText(rawDescription)
      return yield* authFailure(`authorization failed: ${error}${description ? ` (${description})` : ""}`, {
        error,
        ...(description !== undefined ? { error_description: description } : {})
      })
    }
    if (rawCode === null || rawCode === "") return yield* authFailure("the authorization response has no code")
    return rawCode
  })

/**
 * The code from the URL the authorization server redirected to (RFC 6749 §4.1.2). Rules, in order: a repeated
 * parameter; `expectedState` given and the state differs or is missing; `iss` of another issuer (or, with
 * `requireIss`, none); an `error` parameter; no `code`.
 */
export const parseResponseUrl = (
  url: string,
  options: ParseResponseUrlOptions = {}
): Effect.Effect<string, AuthenticationError> =>
  Effect.gen(function* () {
    const query = yield* callbackQuery(url)
    yield* checkState(query, options?.expectedState)
    yield* checkIssuer(query, options?.issuer, options?.requireIss === true)
    return yield* readCode(query)
  })

/** The checks `parseResponseUrl` makes beside the code's: the state sent, the issuer (RFC 9207). */
export interface ParseResponseUrlOptions {
  readonly expectedState?: string | undefined
  /** The issuer an `iss` must equal (simple string comparison). */
  readonly issuer?: string | undefined
  /** Refuse a response without `iss` (RFC 9207 §2.4; for a server that sends it). Default false. */
  readonly requireIss?: boolean | undefined
}

/** The protocol steps of one client over `endpoint`. */
export const make = (config: ResolvedProtocol, endpoint: TokenEndpoint.TokenEndpoint): Service => {
  const publicClient = config.clientSecret === undefined

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
      const state = options.state !== undefined && options.state !== "" ? options.state : randomState()
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
    options: {
      readonly codeVerifier?: string | Redacted.Redacted<string> | undefined
      readonly redirectUri?: string | undefined
    } = {}
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
    yield* checkState(query, pending.state)
    yield* checkIssuer(query, config.issuer, config.requireIss)
    const code = yield* readCode(query)
    // the protocol remembers nothing: the single use of a pending sign-in belongs to its owner (`pendingSignIns`)
    return yield* exchangeCode(code, { codeVerifier: pending.codeVerifier, redirectUri: pending.redirectUri })
  })

  // RFC 6749 §6: a response without a refresh token keeps the one sent
  const refresh = Effect.fn("OAuthClient.refresh")(function* (
    refreshToken: string | Redacted.Redacted<string>,
    options: { readonly scope?: string | ReadonlyArray<string> | undefined } = {}
  ) {
    const value = secretValue(refreshToken)
    if (typeof value !== "string" || value.trim() === "") return yield* authFailure("no refresh token to renew with")
    const sent = Redacted.make(value)
    const token = yield* endpoint({
      grant_type: "refresh_token",
      refresh_token: sent,
      scope: normalizeScope(options?.scope)
    })
    return token.refreshToken === undefined ? new TokenInfo({ ...token, refreshToken: sent }) : token
  })

  // RFC 6749 §4.4: a confidential client only (§2.1)
  const clientCredentials = Effect.fn("OAuthClient.clientCredentials")(function* (
    options: { readonly scope?: string | ReadonlyArray<string> | undefined } = {}
  ) {
    if (publicClient) {
      return yield* authFailure("a public client cannot use the client credentials grant (RFC 6749 §4.4)", {
        error: "unauthorized_client",
        error_description: "the client credentials grant needs a confidential client"
      })
    }
    const scope = options?.scope !== undefined ? normalizeScope(options.scope) : config.scope
    return yield* endpoint({ grant_type: "client_credentials", scope })
  })

  return {
    authorizationUrl,
    beginAuthorization,
    completeAuthorization,
    exchangeCode,
    refresh,
    clientCredentials
  }
}
