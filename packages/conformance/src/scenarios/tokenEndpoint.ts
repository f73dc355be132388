/** the contract (4): the token endpoint, its bodies, its errors and its retries. */
import assert from "node:assert/strict"
import type { Scenario } from "../scenario.js"
import { basic, CANARY, credentials, failure, formValue, hasControlOrBidi, ok, redirectUri } from "../support.js"

export const tokenEndpoint: ReadonlyArray<Scenario> = [
  {
    id: "client credentials: POST /api/token with Basic auth, a form body and the scope normalised",
    run: async (driver, server) => {
      const provider = ok(await driver.clientCredentials(credentials(server, { scope: "a,b  c" })))
      assert.equal(ok(await provider.getAccessToken()), "token-1")
      const [request] = server.tokenRequests()
      assert.equal(request?.method, "POST")
      assert.equal(request?.headers.authorization, basic(CANARY.clientId, CANARY.clientSecret))
      assert.match(request?.headers["content-type"] ?? "", /^application\/x-www-form-urlencoded/)
      assert.deepEqual(request?.form, [
        ["grant_type", "client_credentials"],
        ["scope", "a b c"]
      ])
      await provider.close()
    }
  },
  {
    id: "scope: a list is joined with single spaces, an empty one is omitted",
    run: async (driver, server) => {
      const listed = ok(await driver.clientCredentials(credentials(server, { scope: ["x", "y"] })))
      ok(await listed.getAccessToken())
      const empty = ok(await driver.clientCredentials(credentials(server, { scope: [] })))
      ok(await empty.getAccessToken())
      const [first, second] = server.tokenRequests()
      assert.equal(formValue(first!.form, "scope"), "x y")
      assert.deepEqual(second!.form, [["grant_type", "client_credentials"]])
      await Promise.all([listed.close(), empty.close()])
    }
  },
  {
    id: "public client: no Authorization header, client_id in the body of a refresh",
    run: async (driver, server) => {
      const provider = ok(
        await driver.authorizationCode({
          clientId: CANARY.clientId,
          authUrl: server.url,
          publicClient: true,
          redirectUri,
          refreshToken: CANARY.refreshToken
        })
      )
      ok(await provider.getAccessToken())
      const [request] = server.tokenRequests()
      assert.equal(request?.headers.authorization, undefined)
      assert.equal(formValue(request!.form, "grant_type"), "refresh_token")
      assert.equal(formValue(request!.form, "refresh_token"), CANARY.refreshToken)
      assert.equal(formValue(request!.form, "client_id"), CANARY.clientId)
      await provider.close()
    }
  },
  {
    id: "public client: exchangeCode without a code verifier is a ConfigurationError, with no request",
    run: async (driver, server) => {
      const provider = ok(
        await driver.authorizationCode({
          clientId: CANARY.clientId,
          authUrl: server.url,
          publicClient: true,
          redirectUri
        })
      )
      const error = failure(await provider.exchangeCode(CANARY.code), "ConfigurationError")
      assert.match(error.message, /PKCE/i)
      assert.equal(server.tokenRequests().length, 0)
      await provider.close()
    }
  },
  {
    id: "code exchange: code, redirect_uri and code_verifier in the body; the token carries the refresh token",
    run: async (driver, server) => {
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri })))
      const token = ok(await provider.exchangeCode(CANARY.code, CANARY.verifier))
      assert.equal(token.accessToken, "token-1")
      assert.equal(token.refreshToken, "refresh-1")
      const [request] = server.tokenRequests()
      assert.deepEqual(Object.fromEntries(request!.form), {
        grant_type: "authorization_code",
        code: CANARY.code,
        redirect_uri: redirectUri,
        code_verifier: CANARY.verifier
      })
      assert.equal(ok(await provider.getAccessToken()), "token-1")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "a code exchange whose response lacks refresh_token is an AuthenticationError",
    run: async (driver, server) => {
      server.onToken({ body: { access_token: "a", token_type: "Bearer", expires_in: 3600 } })
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri })))
      failure(await provider.exchangeCode(CANARY.code), "AuthenticationError")
      await provider.close()
    }
  },
  {
    id: "refresh: a response without refresh_token keeps the previous one; a rotated one replaces it",
    run: async (driver, server) => {
      server.onToken(
        { body: { access_token: "access-1", token_type: "Bearer", expires_in: 3600 } },
        { body: { access_token: "access-2", token_type: "Bearer", expires_in: 3600, refresh_token: "rotated-2" } },
        { body: { access_token: "access-3", token_type: "Bearer", expires_in: 3600, refresh_token: null } }
      )
      const provider = ok(
        await driver.authorizationCode(credentials(server, { redirectUri, refreshToken: CANARY.refreshToken }))
      )
      assert.equal(ok(await provider.getAccessToken()), "access-1")
      assert.equal(ok(await provider.forceRefresh("access-1")), "access-2")
      assert.equal(ok(await provider.forceRefresh("access-2")), "access-3")
      assert.equal(ok(await provider.forceRefresh("access-3")), "token-4")
      const sent = server.tokenRequests().map((request) => formValue(request.form, "refresh_token"))
      assert.deepEqual(sent, [CANARY.refreshToken, CANARY.refreshToken, "rotated-2", "rotated-2"])
      await provider.close()
    }
  },
  {
    id: "a 4xx OAuth error is an AuthenticationError with its payload, never retried",
    run: async (driver, server) => {
      server.onToken({
        status: 401,
        body: { error: "invalid_client", error_description: "bad\u001b[31m client\u202e" }
      })
      const provider = ok(await driver.clientCredentials(credentials(server, { maxRetries: 3 })))
      const error = failure(await provider.getAccessToken(), "AuthenticationError")
      assert.match(error.message, /invalid_client/)
      assert.equal(hasControlOrBidi(error.message), false, "control and bidi characters are removed")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "5xx and a reset connection are retried, then the token is served",
    run: async (driver, server) => {
      server.onToken({ status: 500 }, { destroy: true })
      const provider = ok(await driver.clientCredentials(credentials(server, { maxRetries: 2 })))
      assert.equal(ok(await provider.getAccessToken()), "token-3")
      assert.equal(server.tokenRequests().length, 3)
      await provider.close()
    }
  },
  {
    id: "retries run out: TransportError after maxRetries + 1 attempts",
    run: async (driver, server) => {
      server.onToken({ status: 502 }, { status: 502 }, { status: 502 })
      const provider = ok(await driver.clientCredentials(credentials(server, { maxRetries: 1 })))
      failure(await provider.getAccessToken(), "TransportError")
      assert.equal(server.tokenRequests().length, 2)
      await provider.close()
    }
  },
  {
    id: "a 503 with Retry-After is retried after it",
    run: async (driver, server) => {
      server.onToken({ status: 503, headers: { "retry-after": "1" } })
      const provider = ok(await driver.clientCredentials(credentials(server, { maxRetries: 1 })))
      const started = Date.now()
      assert.equal(ok(await provider.getAccessToken()), "token-2")
      assert.ok(Date.now() - started >= 900, "waited for Retry-After")
      await provider.close()
    }
  },
  {
    id: "a malformed token response is an AuthenticationError",
    run: async (driver, server) => {
      server.onToken({ body: "not json", headers: { "content-type": "application/json" } })
      const provider = ok(await driver.clientCredentials(credentials(server)))
      failure(await provider.getAccessToken(), "AuthenticationError")
      server.onToken({ body: { token_type: "Bearer", expires_in: 3600 } })
      failure(await provider.getAccessToken(), "AuthenticationError")
      await provider.close()
    }
  },
  {
    id: "invalid_grant: the refresh token is never sent again; callers fail at once with no request",
    run: async (driver, server) => {
      server.onToken({ status: 400, body: { error: "invalid_grant", error_description: "Refresh token revoked" } })
      const provider = ok(
        await driver.authorizationCode(credentials(server, { redirectUri, refreshToken: CANARY.refreshToken }))
      )
      failure(await provider.getAccessToken(), "AuthenticationError")
      failure(await provider.getAccessToken(), "AuthenticationError")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "an empty 400 to a refresh counts as invalid_grant (RFC 6749 §5.2 requires an error code)",
    run: async (driver, server) => {
      server.onToken({ status: 400, body: "" })
      const provider = ok(
        await driver.authorizationCode(credentials(server, { redirectUri, refreshToken: CANARY.refreshToken }))
      )
      failure(await provider.getAccessToken(), "AuthenticationError")
      failure(await provider.getAccessToken(), "AuthenticationError")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "a refresh that timed out is not abandoned: the retry's invalid_grant waits for its late answer, kept and used",
    run: async (driver, server) => {
      // the server rotates at once and answers late; the retry presents the rotated-out token and is refused
      server.onToken(
        {
          delayMs: 1500,
          body: { access_token: "late-access", token_type: "Bearer", expires_in: 3600, refresh_token: "late-refresh" }
        },
        {
          status: 400,
          body: { error: "invalid_grant", error_description: "Refresh token already used" },
          onlyFor: ["refresh_token", CANARY.refreshToken]
        }
      )
      const provider = ok(
        await driver.authorizationCode(
          credentials(server, { redirectUri, refreshToken: CANARY.refreshToken, timeout: "1 second", maxRetries: 1 })
        )
      )
      assert.equal(ok(await provider.getAccessToken()), "late-access")
      // (on a busy machine the late answer may come before the retry is sent: then there is no retry)
      assert.match(ok(await provider.forceRefresh("late-access")), /^token-[23]$/)
      const sent = server.tokenRequests().map((request) => formValue(request.form, "refresh_token"))
      assert.deepEqual(sent.slice(-1), ["late-refresh"], "the late answer's rotated refresh token is the one used next")
      await provider.close()
    }
  },
  {
    id: "a code exchange that timed out is not abandoned: its late answer wins over the retry's used-code refusal",
    run: async (driver, server) => {
      server.onToken(
        {
          delayMs: 1500,
          body: { access_token: "late-access", token_type: "Bearer", expires_in: 3600, refresh_token: "late-refresh" }
        },
        {
          status: 400,
          body: { error: "invalid_grant", error_description: "Authorization code already used" },
          onlyFor: ["code", CANARY.code]
        }
      )
      const provider = ok(
        await driver.authorizationCode(credentials(server, { redirectUri, timeout: "1 second", maxRetries: 1 }))
      )
      const token = ok(await provider.exchangeCode(CANARY.code, CANARY.verifier))
      assert.equal(token.accessToken, "late-access")
      assert.equal(token.refreshToken, "late-refresh")
      assert.equal(ok(await provider.getAccessToken()), "late-access")
      await provider.close()
    }
  },
  {
    id: "a late answer that does not come in one more timeout: the retry's refusal is the answer",
    run: async (driver, server) => {
      server.onToken(
        { delayMs: 8000, body: { access_token: "too-late", token_type: "Bearer", expires_in: 3600 } },
        { status: 400, body: { error: "invalid_grant", error_description: "Refresh token already used" } }
      )
      const provider = ok(
        await driver.authorizationCode(
          credentials(server, { redirectUri, refreshToken: CANARY.refreshToken, timeout: "500 millis", maxRetries: 1 })
        )
      )
      const error = failure(await provider.getAccessToken(), "AuthenticationError")
      assert.match(error.message, /invalid_grant/)
      assert.equal(server.tokenRequests().length, 2)
      await provider.close()
    }
  },
  {
    id: "no token and no refresh token: AuthenticationError that says to exchange a code first",
    run: async (driver, server) => {
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri })))
      const error = failure(await provider.getAccessToken(), "AuthenticationError")
      assert.match(error.message, /exchangeCode/)
      assert.equal(server.tokenRequests().length, 0)
      await provider.close()
    }
  }
]
