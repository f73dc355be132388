/**
 * The routes: `/login`, `/callback`, `/` and `/logout`, on the SDK's `AuthorizationCode` (sign-in with state and
 * PKCE), `UserTokens` (each user's tokens) and `ServiceClient.forUser` (calls with one user's bearer).
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { timingSafeEqual } from "node:crypto"
import {
  AuthorizationCode,
  type ServiceError,
  ServiceClient,
  type TokenInfo,
  TokenProvider,
  UserTokens
} from "service-sdk"
import { errorPage, PAGE_HEADERS, profilePage, welcomePage } from "./pages.js"
import { isSessionId, newSessionId, Sessions } from "./Sessions.js"

/**
 * @since 0.1.0
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
 * @since 0.1.0
 */
export class Settings extends Context.Tag("web-app/Settings")<Settings, AppSettings>() {}

/**
 * The session cookie's name.
 *
 * @since 0.1.0
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

const safeEquals = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

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
  const client = yield* ServiceClient.forUser(userId.value)
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
  const signIn = yield* AuthorizationCode
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
  if (previous !== "invalid" && Option.isSome(previous)) yield* sessions.remove(previous.value)
  const pending = yield* signIn.beginAuthorization({ scope: settings.scope })
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

/** `GET /callback`: the pending sign-in of this browser, completed once; then who signed in, and their tokens kept. */
const callback = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const signIn = yield* AuthorizationCode
  const userTokens = yield* UserTokens
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, settings.baseUrl)
  const cookie = yield* sessionCookie
  const pending =
    cookie === "invalid" || Option.isNone(cookie) ? Option.none() : yield* sessions.takePending(cookie.value)
  if (Option.isNone(pending)) {
    // the cookie stays: it may be a signed-in session (a person pressing Back to the callback stays signed in)
    return errorPage({
      status: 400,
      code: "no_pending_sign_in",
      title: "No sign-in in progress",
      detail:
        "This browser has no sign-in waiting for an answer: it was already completed or cancelled, it expired, it " +
        "was started in another browser, or the session cookie was changed. Nothing was signed in. Start again."
    })
  }
  const params = url.searchParams
  const error = params.get("error")
  if (error !== null) {
    return signInFailed(
      settings,
      error === "access_denied" ? "Sign-in cancelled" : "Sign-in failed",
      error === "access_denied"
        ? "You did not allow access, so you are not signed in."
        : `The Service refused the sign-in (${error}). Nothing was signed in.`,
      error === "access_denied" ? "access_denied" : "authorization_error"
    )
  }
  const state = params.get("state")
  if (state === null || !safeEquals(state, pending.value.state)) {
    // RFC 6749 §10.12: a response for another sign-in (forged or replayed) is refused, and this one is over
    return signInFailed(
      settings,
      "This sign-in response is not yours",
      "The answer does not belong to the sign-in this browser started (its state does not match), so it was " +
        "refused and nothing was signed in. Start again.",
      "state_mismatch"
    )
  }
  const token = yield* signIn.completeAuthorization(url.toString(), pending.value).pipe(Effect.either)
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
  // a fresh session id once signed in (session fixation)
  const sessionId = newSessionId()
  yield* sessions.putUser(sessionId, me.right, settings.sessionTtl)
  return withSession(redirect("/", 303), settings, sessionId, settings.sessionTtl)
})

/** The user id of a fresh token, from `/me`, with a client on that token alone. */
const whoIs = (token: TokenInfo) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const client = yield* ServiceClient.make({ apiUrl: settings.apiUrl }).pipe(
      Effect.provideService(TokenProvider, TokenProvider.static(token.accessToken))
    )
    return (yield* client.users.me).id
  })

/** `/logout` (POST from the page's button; GET works too): forget the user's tokens and this session. */
const logout = Effect.gen(function* () {
  const settings = yield* Settings
  const sessions = yield* Sessions
  const userTokens = yield* UserTokens
  const cookie = yield* sessionCookie
  if (cookie !== "invalid" && Option.isSome(cookie)) {
    const userId = yield* sessions.getUser(cookie.value)
    if (Option.isSome(userId)) yield* userTokens.signOut(userId.value)
    yield* sessions.remove(cookie.value)
  }
  return clearSession(redirect("/?signed-out", 303), settings)
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
 * @since 0.1.0
 */
export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/", home),
  HttpRouter.get("/login", login),
  HttpRouter.get("/callback", callback),
  HttpRouter.post("/logout", logout),
  HttpRouter.get("/logout", logout),
  HttpRouter.get("/favicon.ico", Effect.succeed(HttpServerResponse.empty({ status: 204 })))
)

/**
 * The whole app, errors included.
 *
 * @since 0.1.0
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
 * @since 0.1.0
 */
export type AppContext = Settings | Sessions | AuthorizationCode | UserTokens | ServiceClient | HttpClient.HttpClient
