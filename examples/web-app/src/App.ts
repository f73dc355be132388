/**
 * The routes: `/login`, `/callback`, `/` and `/logout`, on the SDK's `OAuthClient` (the sign-in's protocol steps,
 * with state and PKCE), `UserTokens` (each user's tokens, kept and renewed) and `ServiceClient.makeWith` (calls with
 * one user's bearer).
 *
 * @since 1.0.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  OAuthClient,
  type ServiceError,
  ServiceClient,
  type TokenInfo,
  TokenProvider,
  UserTokens
} from "@service-sdk/effect"
import { errorPage, PAGE_HEADERS, page, profilePage, welcomePage } from "./pages.js"
import { isSessionId, newSessionId, Sessions } from "./Sessions.js"

/**
 * @since 1.0.0
 */
export interface AppSettings {
  /** where the app is reached, e.g. `http://127.0.0.1:3000` (the redirect URI is `<baseUrl>/callback`) */
  readonly baseUrl: string
  /** the data API, e.g. `http://127.0.0.1:<port>/v1` (default: the SDK's, from `SERVICE_SDK_API_URL`) */
  readonly apiUrl: string | undefined
  /** the scope every sign-in asks for */
  readonly scope: ReadonlyArray<string>
  /** how many saved tracks the home page shows */
  readonly tracksShown: number
  /** how long a signed-in session lasts */
  readonly sessionTtl: Duration.Duration
  /** how long a sign-in may stay at the consent page */
  readonly pendingTtl: Duration.Duration
}

/**
 * @since 1.0.0
 */
export class Settings extends Context.Tag("web-app/Settings")<Settings, AppSettings>() {}

/**
 * The session cookie's name.
 *
 * @since 1.0.0
 */
export const COOKIE = "sid"

/** The Service's user ids (the emulator's rule): `login_hint` is passed on only when it is one. */
const USER_ID = /^[A-Za-z0-9_-]{1,64}$/

const cookieOptions = (settings: AppSettings, maxAge: Duration.Duration) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  path: "/",
  secure: settings.baseUrl.startsWith("https:"),
  maxAge
})

const withSession = (
  response: HttpServerResponse.HttpServerResponse,
  settings: AppSettings,
  sessionId: string,
  maxAge: Duration.Duration
) => HttpServerResponse.unsafeSetCookie(response, COOKIE, sessionId, cookieOptions(settings, maxAge))

const clearSession = (response: HttpServerResponse.HttpServerResponse, settings: AppSettings) =>
  HttpServerResponse.unsafeSetCookie(response, COOKIE, "", {
    ...cookieOptions(settings, Duration.zero),
    expires: new Date(0)
  })

const redirect = (location: string, status: 302 | 303 = 302) =>
  HttpServerResponse.redirect(location, {
    status,
    headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
  })

/** The session id from the cookie: none when absent; `invalid` when present but not a session id's shape. */
const sessionCookie = Effect.map(HttpServerRequest.HttpServerRequest, (request): Option.Option<string> | "invalid" => {
  const value = request.cookies[COOKIE]
  if (value === undefined || value === "") return Option.none()
  return isSessionId(value) ? Option.some(value) : "invalid"
})

const sessionInvalid = (settings: AppSettings) =>
  clearSession(
    errorPage({
      status: 401,
      code: "session_invalid",
      title: "Your session is not valid",
      detail:
        "This browser's session is not known here: it expired, you signed out, or the session cookie was changed. " +
        "Nothing was shown or changed. Sign in again to continue."
    }),
    settings
  )

const serviceFailure = (error: ServiceError) =>
  errorPage({
    status: 502,
    code: "service_error",
    title: "The Service could not be reached",
    detail: `We could not load your data just now (${error.message}). Try again in a moment.`
  })

/** `GET /`: the signed-in user's profile and first saved tracks, or the welcome page. */
const home = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const request = yield* HttpServerRequest.HttpServerRequest
  const notice = new URL(request.url, settings.baseUrl).searchParams.has("signed-out")
    ? "You are signed out."
    : undefined
  const cookie = yield* sessionCookie
  if (cookie === "invalid") return sessionInvalid(settings)
  if (Option.isNone(cookie)) return welcomePage({ notice })
  const userId = yield* sessions.getUser(cookie.value)
  if (Option.isNone(userId)) {
    // a sign-in under way (the consent page is open, or the person came back from it) is not an error
    return (yield* sessions.hasPending(cookie.value)) ? welcomePage({ notice }) : sessionInvalid(settings)
  }
  // the client calls with this user's bearer only; a 401 renews only this user's token
  const users = yield* UserTokens
  const client = yield* ServiceClient.makeWith(users.provider(userId.value), { apiUrl: settings.apiUrl })
  const loaded = yield* Effect.all([client.users.me, client.library.savedTracks({ limit: settings.tracksShown })], {
    concurrency: 2
  }).pipe(Effect.either)
  if (loaded._tag === "Left") {
    const error = loaded.left
    if (error._tag === "AuthenticationError") {
      // the user's tokens are gone (signed out elsewhere, refresh token revoked): this session is over
      yield* sessions.remove(cookie.value)
      return clearSession(
        errorPage({
          status: 401,
          code: "signed_out",
          title: "Please sign in again",
          detail: "Your sign-in has ended: you signed out in another window, or access was revoked."
        }),
        settings
      )
    }
    return serviceFailure(error)
  }
  const [me, saved] = loaded.right
  if (me.id !== userId.value) {
    // never show one user's data to another: this would be a token mix-up
    return yield* Effect.dieMessage("the Service answered for another user than the session's")
  }
  return profilePage(me, saved)
})

/** `GET /login`: a new session holding a fresh state and PKCE verifier, then off to the consent page. */
const login = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const oauth = yield* OAuthClient.OAuthClient
  const request = yield* HttpServerRequest.HttpServerRequest
  const hint = new URL(request.url, settings.baseUrl).searchParams.get("login_hint")
  if (hint !== null && !USER_ID.test(hint)) {
    return errorPage({
      status: 400,
      code: "invalid_login_hint",
      title: "That user id is not valid",
      detail: "A user id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -."
    })
  }
  const previous = yield* sessionCookie
  if (previous !== "invalid" && Option.isSome(previous)) {
    // a signed-in session is never ended by a link (any site can send a browser here): sign out first to switch users
    if (Option.isSome(yield* sessions.getUser(previous.value))) return redirect("/", 303)
    yield* sessions.remove(previous.value)
  }
  const pending = yield* oauth.beginAuthorization({ scope: settings.scope })
  const url = new URL(pending.url)
  if (hint !== null) url.searchParams.set("login_hint", hint)
  // a new id for every sign-in: a session id never outlives a change of who is signed in
  const sessionId = newSessionId()
  yield* sessions.putPending(
    sessionId,
    { state: pending.state, codeVerifier: pending.codeVerifier },
    settings.pendingTtl
  )
  return withSession(redirect(url.toString()), settings, sessionId, settings.pendingTtl)
})

/** A failed sign-in: its session held only the pending sign-in, so the cookie goes too. */
const signInFailed = (settings: AppSettings, title: string, detail: string, code: string) =>
  clearSession(errorPage({ status: 400, code, title, detail }), settings)

/** The `error` codes of RFC 6749 §4.1.2.1: only these are named on the page (never a caller's own text). */
const AUTHORIZATION_ERRORS: ReadonlySet<string> = new Set([
  "invalid_request",
  "unauthorized_client",
  "access_denied",
  "unsupported_response_type",
  "invalid_scope",
  "server_error",
  "temporarily_unavailable"
])

const noPendingSignIn = errorPage({
  status: 400,
  code: "no_pending_sign_in",
  title: "No sign-in in progress",
  detail:
    "This browser has no sign-in waiting for an answer: it was already completed or cancelled, it expired, it " +
    "was started in another browser, or the session cookie was changed. Nothing was signed in. Start again."
})

/** A callback for another sign-in: refused, and this browser's own sign-in (if any) still waits for its answer. */
const notYours = errorPage({
  status: 400,
  code: "state_mismatch",
  title: "This sign-in response is not yours",
  detail:
    "The answer does not belong to the sign-in this browser started (its state does not match), so it was refused " +
    "and nothing was signed in or cancelled."
})

/**
 * `GET /callback`: the pending sign-in of this browser, completed once; then who signed in, and their tokens kept.
 * The state is checked before anything else (RFC 6749 §10.12): a response without this browser's state, `error`
 * included, neither completes nor cancels its sign-in.
 */
const callback = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const oauth = yield* OAuthClient.OAuthClient
  const userTokens = yield* UserTokens
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, settings.baseUrl)
  const params = url.searchParams
  const cookie = yield* sessionCookie
  // the cookie stays in every refusal: it may be a signed-in session (a person pressing Back to the callback)
  if (cookie === "invalid" || Option.isNone(cookie)) return noPendingSignIn
  const state = params.get("state")
  if (state === null) return (yield* sessions.hasPending(cookie.value)) ? notYours : noPendingSignIn
  const taken = yield* sessions.takePending(cookie.value, state)
  if (taken._tag === "NotPending") return noPendingSignIn
  if (taken._tag === "StateMismatch") return notYours
  const pending = taken.pending
  const error = params.get("error")
  if (error !== null) {
    return signInFailed(
      settings,
      error === "access_denied" ? "Sign-in cancelled" : "Sign-in failed",
      error === "access_denied"
        ? "You did not allow access, so you are not signed in."
        : `The Service refused the sign-in (${AUTHORIZATION_ERRORS.has(error) ? error : "unknown error"}). Nothing was signed in.`,
      error === "access_denied" ? "access_denied" : "authorization_error"
    )
  }
  const token = yield* oauth.completeAuthorization(url.toString(), pending).pipe(Effect.either)
  if (token._tag === "Left") {
    return token.left._tag === "AuthenticationError"
      ? signInFailed(
          settings,
          "Sign-in failed",
          `The Service did not accept this sign-in (${token.left.message}). Start again.`,
          "sign_in_failed"
        )
      : serviceFailure(token.left)
  }
  const me = yield* whoIs(token.right).pipe(Effect.either)
  if (me._tag === "Left") {
    return me.left._tag === "AuthenticationError"
      ? signInFailed(
          settings,
          "Sign-in failed",
          "The Service did not accept the new sign-in. Start again.",
          "sign_in_failed"
        )
      : serviceFailure(me.left)
  }
  yield* userTokens.signIn(me.right, token.right)
  yield* Effect.logInfo(`web-app: ${me.right} signed in`)
  // a fresh session id once signed in (session fixation)
  const sessionId = newSessionId()
  yield* sessions.putUser(sessionId, me.right, settings.sessionTtl)
  return withSession(redirect("/", 303), settings, sessionId, settings.sessionTtl)
})

/** The user id of a fresh token, from `/me`, with a client on that token alone. */
const whoIs = (token: TokenInfo) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const client = yield* ServiceClient.makeWith(TokenProvider.static(token.accessToken), { apiUrl: settings.apiUrl })
    return (yield* client.users.me).id
  })

/**
 * Whether a request comes from this app's own pages: `Sec-Fetch-Site: same-origin`, or else an `Origin` equal to the
 * app's. A request with neither is refused (every browser sends `Origin` with a POST).
 */
const sameOrigin = (request: HttpServerRequest.HttpServerRequest, settings: AppSettings): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) return site === "same-origin"
  const origin = request.headers.origin
  return origin !== undefined && origin === new URL(settings.baseUrl).origin
}

/** `POST /logout` from the page's button: forget the user's tokens and this session. */
const logout = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const userTokens = yield* UserTokens
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!sameOrigin(request, settings)) {
    // another site's form (or a script) cannot sign anyone out: nothing changes, the cookie stays
    return errorPage({
      status: 403,
      code: "cross_site_sign_out",
      title: "Sign out from this site",
      detail: "That sign-out request did not come from this site, so nothing changed. Use the Sign out button here."
    })
  }
  const cookie = yield* sessionCookie
  if (cookie !== "invalid" && Option.isSome(cookie)) {
    const userId = yield* sessions.getUser(cookie.value)
    if (Option.isSome(userId)) yield* userTokens.signOut(userId.value)
    yield* sessions.remove(cookie.value)
  }
  return clearSession(redirect("/?signed-out", 303), settings)
})

/** `GET /logout` (a link, typed or from another site) changes nothing: it answers with the sign-out button. */
const logoutPage = Effect.gen(function* () {
  const sessions = yield* Sessions
  const cookie = yield* sessionCookie
  const userId =
    cookie === "invalid" || Option.isNone(cookie) ? Option.none<string>() : yield* sessions.getUser(cookie.value)
  return Option.isNone(userId)
    ? welcomePage({ notice: "You are not signed in." })
    : page({
        title: "Sign out",
        signedInAs: userId.value,
        body: `<section class="card" id="confirm-sign-out">
<h1>Sign out?</h1>
<p>You are still signed in. Use the Sign out button to end this session.</p>
<form method="post" action="/logout"><button class="button" id="confirm-sign-out-button" type="submit">Sign out</button></form>
</section>`
      })
})

const notFound = errorPage({
  status: 404,
  code: "not_found",
  title: "Page not found",
  detail: "There is nothing at this address."
})

/**
 * The app's router. Store failures (`TokenCacheError`) and transport failures become a 503/502 page; a defect a 500
 * page; nothing leaks a token or an internal error to the browser.
 *
 * @since 1.0.0
 */
export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/", home),
  HttpRouter.get("/login", login),
  HttpRouter.get("/callback", callback),
  HttpRouter.post("/logout", logout),
  HttpRouter.get("/logout", logoutPage),
  HttpRouter.get("/favicon.ico", Effect.succeed(HttpServerResponse.empty({ status: 204 })))
)

/**
 * The whole app, errors included.
 *
 * @since 1.0.0
 */
export const app = router.pipe(
  Effect.catchTags({
    RouteNotFound: () => Effect.succeed(notFound),
    TokenCacheError: () =>
      Effect.succeed(
        errorPage({
          status: 503,
          code: "store_unavailable",
          title: "Sign-in is unavailable",
          detail: "The session store is not answering. Try again in a moment."
        })
      )
  }),
  Effect.catchAllCause((cause) =>
    Effect.zipRight(
      Effect.logError("web-app: request failed", cause),
      Effect.succeed(
        errorPage({
          status: 500,
          code: "internal_error",
          title: "Something went wrong",
          detail: "The app could not answer this request. Try again, or sign in again."
        })
      )
    )
  ),
  Effect.map((response) => HttpServerResponse.setHeaders(response, PAGE_HEADERS))
)

/**
 * What the app needs in context.
 *
 * @since 1.0.0
 */
export type AppContext = Settings | Sessions | OAuthClient.OAuthClient | UserTokens | HttpClient.HttpClient
