/**
 * OAuthClient's protocol steps against the emulator over loopback, on the undici client: sign-in with PKCE
 * (confidential and public clients), refresh with and without rotation, client credentials, and the failures the
 * server decides (a wrong verifier, a replayed code, a rotated-out refresh token).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { OAuthClient, ServiceClient } from "@service-sdk/effect"
import { Emulator } from "../../src/internal/effectApi.js"
import { request } from "../utils.js"
import { HttpLive, REDIRECT_URI, statsSince, USER_SCOPES } from "./harness.js"

/** Follows `/authorize` (autoApprove) and returns the URL it redirects to: the callback URL. */
const callbackUrl = (url: string) =>
  Effect.gen(function* () {
    const reply = yield* Effect.orDie(request(url))
    const location = reply.headers.get("location")
    if (reply.status !== 302 || location === null) return yield* Effect.die(`no redirect: ${reply.status}`)
    return location
  })

const confidential = (emulator: Emulator.Service) => ({
  clientId: emulator.clientId,
  clientSecret: emulator.clientSecret,
  authUrl: emulator.authUrl,
  redirectUri: REDIRECT_URI,
  scope: USER_SCOPES
})

describe("OAuthClient against the emulator", () => {
  it.scopedLive("a confidential client signs a user in (login_hint), refreshes, and nothing is cached", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const since = yield* statsSince(emulator)
      const oauth = yield* OAuthClient.make(confidential(emulator))
      const pending = yield* oauth.beginAuthorization({ loginHint: "user-b" })
      const token = yield* oauth.completeAuthorization(yield* callbackUrl(pending.url), pending)
      // the code exchange fails without a refresh token: what can fail here is that it is not the access token
      expect(Redacted.value(token.refreshToken!)).not.toBe(Redacted.value(token.accessToken))
      const client = yield* Effect.provide(
        ServiceClient,
        ServiceClient.layerAccessToken(token.accessToken, { apiUrl: emulator.apiUrl })
      )
      expect((yield* client.users.me).id).toBe("user-b")

      // the emulator answers refreshes without refresh_token by default: the given one is kept
      const renewed = yield* oauth.refresh(token.refreshToken!)
      expect(Redacted.value(renewed.accessToken)).not.toBe(Redacted.value(token.accessToken))
      expect(Redacted.value(renewed.refreshToken!)).toBe(Redacted.value(token.refreshToken!))
      const again = yield* oauth.refresh(token.refreshToken!)
      expect(Redacted.value(again.accessToken)).not.toBe(Redacted.value(renewed.accessToken))
      expect(yield* since).toMatchObject({ authorization_code: 1, refresh_token: 2 })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a public client: PKCE sign-in, rotation, and the rotated-out refresh token is invalid_grant", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true, rotateRefreshTokens: true })
      const oauth = yield* OAuthClient.make({
        clientId: emulator.publicClientId,
        publicClient: true,
        authUrl: emulator.authUrl,
        redirectUri: REDIRECT_URI
      })
      const pending = yield* oauth.beginAuthorization()
      const token = yield* oauth.completeAuthorization(yield* callbackUrl(pending.url), pending)
      const rotated = yield* oauth.refresh(token.refreshToken!)
      expect(Redacted.value(rotated.refreshToken!)).not.toBe(Redacted.value(token.refreshToken!))
      const stale = yield* Effect.flip(oauth.refresh(token.refreshToken!))
      expect(stale).toMatchObject({ _tag: "AuthenticationError", payload: { error: "invalid_grant" } })
      // a public client has no client credentials grant
      expect((yield* Effect.flip(oauth.clientCredentials()))._tag).toBe("AuthenticationError")
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a wrong verifier is refused by the server; so is a replayed code (the protocol keeps no memory)", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const since = yield* statsSince(emulator)
      const oauth = yield* OAuthClient.make(confidential(emulator))
      const pending = yield* oauth.beginAuthorization()
      const other = yield* oauth.beginAuthorization()
      const callback = yield* callbackUrl(pending.url)
      const wrong = yield* Effect.flip(
        oauth.exchangeCode(new URL(callback).searchParams.get("code")!, { codeVerifier: other.codeVerifier })
      )
      expect(wrong).toMatchObject({ _tag: "AuthenticationError", status: 400, payload: { error: "invalid_grant" } })
      yield* oauth.completeAuthorization(callback, pending)
      const replay = yield* Effect.flip(oauth.completeAuthorization(callback, pending))
      expect(replay).toMatchObject({ _tag: "AuthenticationError", status: 400, payload: { error: "invalid_grant" } })
      // the replay reached the server, which refused the used code (a provider refuses it without a request)
      expect(yield* since).toMatchObject({ authorization_code: 3 })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("clientCredentials: an app token for the data API, a new one on every call", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make()
      const oauth = yield* OAuthClient.make({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl
      })
      const first = yield* oauth.clientCredentials()
      const second = yield* oauth.clientCredentials()
      expect(Redacted.value(first.accessToken)).not.toBe(Redacted.value(second.accessToken))
      const client = yield* Effect.provide(
        ServiceClient,
        ServiceClient.layerAccessToken(second.accessToken, { apiUrl: emulator.apiUrl })
      )
      expect((yield* client.albums.get("6akEvsycLGftJxYudPjmqK")).id).toBe("6akEvsycLGftJxYudPjmqK")
    }).pipe(Effect.provide(HttpLive))
  )
})
