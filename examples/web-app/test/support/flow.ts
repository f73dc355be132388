import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Emulator } from "@service-sdk/effect/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as WebApp from "../../src/WebApp.js"

/** An emulator (autoApprove: `login_hint` is the user) and the app on it, in the current scope. */
export const startApp = (options: WebApp.WebAppOptions = {}) =>
  Effect.gen(function* () {
    const emulator = yield* Emulator.make({ autoApprove: true })
    // the HTTP client lives in the same scope as the app
    const http = yield* Layer.build(NodeHttpClient.layerUndici)
    const app = yield* WebApp.make({
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl,
      apiUrl: emulator.apiUrl,
      ...options
    }).pipe(Effect.provide(http))
    return { emulator, app }
  })

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/** One request, redirects not followed. */
export const get = (url: string, cookie?: string, init: RequestInit = {}): Effect.Effect<Reply> =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      redirect: "manual",
      ...init,
      headers: { ...(cookie === undefined ? {} : { cookie: `sid=${cookie}` }), ...(init.headers as object) }
    })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

/** The `sid` value a response sets ("" when it clears it), or undefined. */
export const setCookieOf = (reply: Reply): string | undefined => {
  const header = reply.headers.getSetCookie().find((cookie) => cookie.startsWith("sid="))
  return header === undefined ? undefined : header.slice(4, header.indexOf(";"))
}

/** Signs `userId` in the way a browser would (autoApprove): returns the signed-in session cookie and the callback. */
export const signIn = (appUrl: string, userId: string) =>
  Effect.gen(function* () {
    const login = yield* get(`${appUrl}/login?login_hint=${userId}`)
    const pending = setCookieOf(login)!
    const consent = yield* get(login.headers.get("location")!)
    const callbackUrl = consent.headers.get("location")!
    const callback = yield* get(callbackUrl, pending)
    if (callback.status !== 303)
      return yield* Effect.dieMessage(`callback answered ${callback.status}: ${callback.text}`)
    return { cookie: setCookieOf(callback)!, pendingCookie: pending, callbackUrl, login, callback }
  })

/** The `data-error` of an error page. */
export const errorCodeOf = (html: string): string | undefined => /data-error="([^"]*)"/.exec(html)?.[1]
