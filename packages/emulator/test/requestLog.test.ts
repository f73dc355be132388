/**
 * The emulator's request log (`onRequest`, printed by the bins unless `--quiet`): one line per answered request with
 * method, path, status and milliseconds, never a token, code, state or secret; and `POST /__emulator/reset` with an
 * empty body (curl's `-X POST`), which a browser cannot send.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import { Emulator } from "../src/internal/effectApi.js"
import { requestLine } from "../src/internal/http.js"
import { authorizeUrl, clientCredentials, request, REDIRECT_URI, tokenRequest } from "./utils.js"

/** A raw request with exactly these headers (fetch adds its own). */
const raw = (url: string, headers: Record<string, string>) =>
  Effect.async<number, Error>((resume) => {
    const req = Http.request(url, { method: "POST", headers }, (res) => {
      res.resume()
      res.on("end", () => resume(Effect.succeed(res.statusCode ?? 0)))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end()
  })

describe("request log", () => {
  it("formats method, path without its query, status and milliseconds", () => {
    expect(requestLine("GET", "/authorize?code_challenge=abc&state=s3cr3t", 302, 2.4)).toBe("GET /authorize 302 2 ms")
    expect(requestLine("GET", "/v1/me\u001b[2J", 200, 0)).toBe("GET /v1/me[2J 200 0 ms")
    expect(requestLine("GET", `/${"x".repeat(300)}`, 404, 1).length).toBeLessThan(230)
  })

  it.scopedLive("one line per request, in order, with no token, code, state or secret", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const emulator = yield* Emulator.make({ onRequest: (line) => lines.push(line) })
      const token = yield* clientCredentials(emulator)
      yield* request(`${emulator.apiUrl}/albums/6akEvsycLGftJxYudPjmqK`, {
        headers: { authorization: `Bearer ${token}` }
      })
      const authorize = yield* request(
        authorizeUrl(emulator, { client_id: emulator.clientId, redirect_uri: REDIRECT_URI, state: "state-canary" })
      )
      expect(authorize.status).toBe(200) // the consent page
      const { access_token } = yield* emulator.signIn({ userId: "ada", scope: "user-read-private" })
      yield* request(`${emulator.apiUrl}/me`, { headers: { authorization: `Bearer ${access_token}` } })
      yield* tokenRequest(emulator, {
        grant_type: "authorization_code",
        code: "code-canary",
        redirect_uri: REDIRECT_URI
      })
      expect(lines).toEqual([
        expect.stringMatching(/^POST \/api\/token 200 \d+ ms$/),
        expect.stringMatching(/^GET \/v1\/albums\/6akEvsycLGftJxYudPjmqK 200 \d+ ms$/),
        expect.stringMatching(/^GET \/authorize 200 \d+ ms$/),
        expect.stringMatching(/^GET \/v1\/me 200 \d+ ms$/),
        expect.stringMatching(/^POST \/api\/token 400 \d+ ms$/)
      ])
      const all = lines.join("\n")
      for (const secret of [token, access_token, "state-canary", "code-canary", emulator.clientSecret]) {
        expect(all).not.toContain(secret)
      }
    })
  )

  it.scopedLive("no onRequest, no lines (the library is silent by default)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const reply = yield* request(`${emulator.authUrl}/`)
      expect(reply.status).toBe(200)
    })
  )
})

describe("POST /__emulator/reset", () => {
  it.scopedLive("with an empty body and no Content-Type (curl -X POST) resets", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      yield* clientCredentials(emulator)
      expect((yield* emulator.stats).tokenRequests.total).toBe(1)
      expect(yield* raw(`${emulator.authUrl}/__emulator/reset`, {})).toBe(200)
      expect((yield* emulator.stats).tokenRequests.total).toBe(0)
    })
  )

  it.scopedLive(
    "a browser's body-less POST (it always sends Origin or Sec-Fetch-Site) is refused and changes nothing",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make()
        yield* clientCredentials(emulator)
        for (const headers of [
          { origin: "https://evil.example" },
          { "sec-fetch-site": "cross-site" },
          { "content-type": "text/plain" }
        ]) {
          expect(yield* raw(`${emulator.authUrl}/__emulator/reset`, headers)).toBe(403)
        }
        expect((yield* emulator.stats).tokenRequests.total).toBe(1)
      })
  )
})
