import * as Effect from "effect/Effect"
import type { Emulator } from "../src/internal/effectApi.js"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

/** A real HTTP request over loopback with global fetch; redirects are not followed. */
export const request = (url: string, init: RequestInit = {}): Effect.Effect<Reply, unknown> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { redirect: "manual", signal, ...init })
      const text = await response.text()
      let json: unknown
      try {
        json = text === "" ? undefined : JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: response.status, headers: response.headers, text, json }
    },
    catch: (cause) => cause
  })

/** `application/x-www-form-urlencoded` encoding of one value (RFC 6749 Appendix B). */
export const formEncode = (value: string): string => encodeURIComponent(value).replace(/%20/g, "+")

export const basic = (clientId: string, clientSecret: string): string =>
  `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString("base64")}`

export const form = (params: Record<string, string>): string => new URLSearchParams(params).toString()

const FORM = "application/x-www-form-urlencoded"

/** `POST /api/token` with Basic auth of the default client unless `auth` says otherwise. */
export const tokenRequest = (
  emulator: Emulator.Service,
  params: Record<string, string>,
  auth: string | null = basic(emulator.clientId, emulator.clientSecret)
) =>
  request(`${emulator.authUrl}/api/token`, {
    method: "POST",
    headers: { "content-type": FORM, ...(auth === null ? {} : { authorization: auth }) },
    body: form(params)
  })

export const clientCredentials = (emulator: Emulator.Service, scope?: string) =>
  Effect.flatMap(
    tokenRequest(emulator, { grant_type: "client_credentials", ...(scope === undefined ? {} : { scope }) }),
    (reply) => (reply.status === 200 ? Effect.succeed(reply.json.access_token as string) : Effect.die(reply.text))
  )

export const REDIRECT_URI = "http://127.0.0.1:8765/callback"

export const authorizeUrl = (emulator: Emulator.Service, params: Record<string, string>) =>
  `${emulator.authUrl}/authorize?${form({
    response_type: "code",
    client_id: emulator.clientId,
    redirect_uri: REDIRECT_URI,
    ...params
  })}`

export const requestIdOf = (html: string): string => {
  const match = /name="request_id" value="([^"]+)"/.exec(html)
  if (match === null) throw new Error(`no request_id in page:\n${html}`)
  return match[1]!
}

export const decide = (emulator: Emulator.Service, requestId: string, decision: string) =>
  request(`${emulator.authUrl}/authorize/decision`, {
    method: "POST",
    headers: { "content-type": FORM },
    body: form({ request_id: requestId, decision })
  })

/** The consent flow as a browser does it: open the page, press #approve, read the redirect. */
export const approve = (emulator: Emulator.Service, params: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const page = yield* request(authorizeUrl(emulator, params))
    if (page.status === 302) return new URL(page.headers.get("location")!) // autoApprove
    if (page.status !== 200) return yield* Effect.die(`consent page: ${page.status} ${page.text}`)
    const reply = yield* decide(emulator, requestIdOf(page.text), "approve")
    return new URL(reply.headers.get("location")!)
  })

/** A user token (authorization code grant) with these scopes: `{access_token, refresh_token, ...}`. */
export const userToken = (emulator: Emulator.Service, scope: string) =>
  Effect.gen(function* () {
    const location = yield* approve(emulator, { scope })
    const reply = yield* tokenRequest(emulator, {
      grant_type: "authorization_code",
      code: location.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI
    })
    if (reply.status !== 200) return yield* Effect.die(reply.text)
    return reply.json as { access_token: string; refresh_token: string; scope: string; expires_in: number }
  })

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

export const api = (emulator: Emulator.Service, path: string, token: string | undefined, init: RequestInit = {}) =>
  request(`${emulator.apiUrl}${path}`, {
    ...init,
    headers: { ...(token === undefined ? {} : bearer(token)), ...(init.headers as Record<string, string> | undefined) }
  })

export const ALBUM_ID = "6akEvsycLGftJxYudPjmqK"
export const PLAYLIST_ID = "37i9dQZF1DXcBWIGoYBM5M"
