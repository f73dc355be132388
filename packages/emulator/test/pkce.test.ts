import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash, randomBytes } from "node:crypto"
import { Emulator } from "../src/internal/effectApi.js"
import { approve, basic, REDIRECT_URI, request, tokenRequest } from "./utils.js"

const PUBLIC = "emulator-public-client"
const pair = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}
const s256 = (challenge: string) => ({ code_challenge: challenge, code_challenge_method: "S256" })

/** The authorization redirect's parameters for these request parameters. */
const authorize = (emulator: Emulator.Service, params: Record<string, string>) =>
  Effect.map(approve(emulator, { state: "st", ...params }), (location) => location.searchParams)

const exchange = (
  emulator: Emulator.Service,
  code: string,
  extra: Record<string, string>,
  auth: string | null = basic(emulator.clientId, emulator.clientSecret)
) => tokenRequest(emulator, { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, ...extra }, auth)

describe("emulator: PKCE and public clients", () => {
  it.scopedLive("the public client is registered by default and exposed; it signs in with S256 and refreshes", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ rotateRefreshTokens: true })
      expect(emulator.publicClientId).toBe(PUBLIC)
      expect(Emulator.defaultPublicClientId).toBe(PUBLIC)
      const { challenge, verifier } = pair()
      const params = yield* authorize(emulator, { client_id: PUBLIC, ...s256(challenge) })
      expect(params.get("state")).toBe("st")
      const code = params.get("code")!
      const reply = yield* exchange(emulator, code, { client_id: PUBLIC, code_verifier: verifier }, null)
      expect(reply.status).toBe(200)
      expect(reply.json.refresh_token).toEqual(expect.any(String))
      const refreshed = yield* tokenRequest(
        emulator,
        { grant_type: "refresh_token", refresh_token: reply.json.refresh_token, client_id: PUBLIC },
        null
      )
      expect(refreshed.status).toBe(200)
      expect(refreshed.json.refresh_token).not.toBe(reply.json.refresh_token)
      const stats = yield* emulator.stats
      expect(stats.tokenRequests.authorization_code).toBe(1)
      expect(stats.tokenRequests.refresh_token).toBe(1)
    })
  )

  it.scopedLive("/authorize: plain, a method without challenge, a bad challenge, a public client without PKCE", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const { challenge } = pair()
      const cases: ReadonlyArray<[Record<string, string>, string]> = [
        [{ client_id: PUBLIC }, "Public clients must use PKCE"],
        [{ code_challenge: challenge, code_challenge_method: "plain" }, "only S256"],
        [{ code_challenge: challenge }, "only S256"],
        [{ code_challenge_method: "S256" }, "without code_challenge"],
        [{ code_challenge: "short", code_challenge_method: "S256" }, "Malformed"]
      ]
      for (const [params, description] of cases) {
        const redirect = yield* authorize(emulator, params)
        expect(redirect.get("error"), JSON.stringify(params)).toBe("invalid_request")
        expect(redirect.get("error_description")).toContain(description)
        expect(redirect.get("state")).toBe("st")
        expect(redirect.has("code")).toBe(false)
      }
      // a confidential client may still sign in without PKCE unless requirePkce is on
      expect((yield* authorize(emulator, {})).has("code")).toBe(true)
      yield* emulator.configure({ requirePkce: true })
      const required = yield* authorize(emulator, {})
      expect(required.get("error")).toBe("invalid_request")
      expect((yield* authorize(emulator, s256(challenge))).has("code")).toBe(true)
    })
  )

  it.scopedLive("the consent page keeps the challenge: approving issues a code that needs the verifier", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const { challenge, verifier } = pair()
      const code = (yield* authorize(emulator, s256(challenge))).get("code")!
      const missing = yield* exchange(emulator, code, {})
      expect(missing.status).toBe(400)
      expect(missing.json).toEqual({ error: "invalid_grant", error_description: "Missing code_verifier" })
      const wrong = yield* exchange(emulator, code, { code_verifier: pair().verifier })
      expect(wrong.status).toBe(400)
      expect(wrong.json.error).toBe("invalid_grant")
      // failed attempts do not use the code up; the right verifier works once, then the code is spent
      const ok = yield* exchange(emulator, code, { code_verifier: verifier })
      expect(ok.status).toBe(200)
      const replay = yield* exchange(emulator, code, { code_verifier: verifier })
      expect(replay.status).toBe(400)
      expect(replay.json.error).toBe("invalid_grant")
    })
  )

  it.scopedLive("a verifier for a code issued without a challenge is refused (PKCE downgrade)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const code = (yield* authorize(emulator, {})).get("code")!
      const reply = yield* exchange(emulator, code, { code_verifier: pair().verifier })
      expect(reply.status).toBe(400)
      expect(reply.json.error).toBe("invalid_grant")
    })
  )

  it.scopedLive("client authentication: public with client_id only; confidential still needs its secret", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const { challenge, verifier } = pair()
      // a confidential client cannot authenticate with client_id alone
      const confidentialCode = (yield* authorize(emulator, s256(challenge))).get("code")!
      const noSecret = yield* exchange(
        emulator,
        confidentialCode,
        { client_id: emulator.clientId, code_verifier: verifier },
        null
      )
      expect(noSecret.status).toBe(401)
      expect(noSecret.json.error).toBe("invalid_client")
      // a public client presenting a secret is refused
      const publicCode = (yield* authorize(emulator, { client_id: PUBLIC, ...s256(challenge) })).get("code")!
      const withSecret = yield* exchange(emulator, publicCode, { code_verifier: verifier }, basic(PUBLIC, "x"))
      expect(withSecret.status).toBe(401)
      // and may not use the client credentials grant
      const app = yield* tokenRequest(emulator, { grant_type: "client_credentials", client_id: PUBLIC }, null)
      expect(app.status).toBe(400)
      expect(app.json.error).toBe("unauthorized_client")
      // the code still works for the public client
      const ok = yield* exchange(emulator, publicCode, { client_id: PUBLIC, code_verifier: verifier }, null)
      expect(ok.status).toBe(200)
    })
  )

  it.scopedLive("requirePkce as a start option and over the control API", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true, requirePkce: true })
      expect((yield* authorize(emulator, {})).get("error")).toBe("invalid_request")
      const off = yield* request(`${emulator.authUrl}/__emulator/config`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ requirePkce: false })
      })
      expect(off.status).toBe(200)
      expect(off.json.requirePkce).toBe(false)
      expect((yield* authorize(emulator, {})).has("code")).toBe(true)
    })
  )

  it.scopedLive("clients registered without a secret are public", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true, clients: [{ clientId: "my-cli" }] })
      expect((yield* authorize(emulator, { client_id: "my-cli" })).get("error")).toBe("invalid_request")
      const { challenge, verifier } = pair()
      const code = (yield* authorize(emulator, { client_id: "my-cli", ...s256(challenge) })).get("code")!
      const ok = yield* exchange(emulator, code, { client_id: "my-cli", code_verifier: verifier }, null)
      expect(ok.status).toBe(200)
    })
  )
})
