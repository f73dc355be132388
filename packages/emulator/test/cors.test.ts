/**
 * CORS (DESIGN section 9, Browser): a page on a loopback origin calls the token endpoint and the data API, as the
 * Service answers public clients; preflight included. Other origins and other paths get no CORS grant.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Emulator } from "../src/index.js"
import { clientCredentials, form, request } from "./utils.js"

const ORIGIN = "http://127.0.0.1:5173"

const preflight = (url: string, origin: string, method: string, headers: string) =>
  request(url, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers }
  })

describe("CORS for loopback origins", () => {
  it.scopedLive("preflight of the token endpoint and the data API from a loopback origin", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      for (const origin of [ORIGIN, "http://localhost:3000", "http://[::1]:8080", "https://127.0.0.1"]) {
        const token = yield* preflight(`${emulator.authUrl}/api/token`, origin, "POST", "content-type")
        expect(token.status).toBe(204)
        expect(token.headers.get("access-control-allow-origin")).toBe(origin)
        expect(token.headers.get("access-control-allow-methods")).toContain("POST")
        expect(token.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("content-type")
        expect(token.headers.get("vary")?.toLowerCase()).toContain("origin")
        const api = yield* preflight(`${emulator.apiUrl}/me/tracks?ids=a`, origin, "PUT", "authorization, content-type")
        expect(api.status).toBe(204)
        expect(api.headers.get("access-control-allow-origin")).toBe(origin)
        expect(api.headers.get("access-control-allow-methods")).toContain("PUT")
        expect(api.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization")
      }
    })
  )

  it.scopedLive("answers carry the grant, errors included, and expose Retry-After", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const ok = yield* request(`${emulator.authUrl}/api/token`, {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
        body: form({ grant_type: "refresh_token", refresh_token: "unknown", client_id: emulator.publicClientId })
      })
      expect(ok.status).toBe(400)
      expect(ok.json.error).toBe("invalid_grant")
      expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN)
      const token = yield* clientCredentials(emulator)
      const me = yield* request(`${emulator.apiUrl}/albums/6akEvsycLGftJxYudPjmqK`, {
        headers: { origin: ORIGIN, authorization: `Bearer ${token}` }
      })
      expect(me.status).toBe(200)
      expect(me.headers.get("access-control-allow-origin")).toBe(ORIGIN)
      expect(me.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("retry-after")
      const unauthorized = yield* request(`${emulator.apiUrl}/me`, { headers: { origin: ORIGIN } })
      expect(unauthorized.status).toBe(401)
      expect(unauthorized.headers.get("access-control-allow-origin")).toBe(ORIGIN)
    })
  )

  it.scopedLive("no grant for other origins, nor on the consent page or the control API", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      for (const origin of ["https://evil.example", "http://127.0.0.1.evil.example", "null", "http://10.0.0.1"]) {
        const token = yield* preflight(`${emulator.authUrl}/api/token`, origin, "POST", "content-type")
        expect(token.status).toBe(403)
        expect(token.headers.get("access-control-allow-origin")).toBeNull()
        const api = yield* request(`${emulator.apiUrl}/me`, { headers: { origin } })
        expect(api.headers.get("access-control-allow-origin")).toBeNull()
      }
      const control = yield* preflight(`${emulator.authUrl}/__emulator/config`, ORIGIN, "POST", "content-type")
      expect(control.headers.get("access-control-allow-origin")).toBeNull()
      const authorize = yield* request(`${emulator.authUrl}/authorize`, { headers: { origin: ORIGIN } })
      expect(authorize.headers.get("access-control-allow-origin")).toBeNull()
      // without an Origin, nothing changes (a server-side client)
      const plain = yield* request(`${emulator.apiUrl}/me`)
      expect(plain.headers.get("access-control-allow-origin")).toBeNull()
    })
  )
})
