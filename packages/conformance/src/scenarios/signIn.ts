/** the contract (3, 4 and 9): the authorization URL, callbacks, `iss` and redirect URIs. */
import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import type { Scenario } from "../scenario.js"
import { CANARY, credentials, failure, ok, redirectUri } from "../support.js"

const base64url = (bytes: Buffer) => bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

export const signIn: ReadonlyArray<Scenario> = [
  {
    id: "authorization URL: response_type, client_id, redirect_uri, scope, state, show_dialog, S256 challenge",
    run: async (driver, server) => {
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri })))
      const url = new URL(
        provider.getAuthorizationUrl({ state: "s-1", scope: ["b", "a"], showDialog: true, codeChallenge: "ch" })
      )
      assert.equal(`${url.origin}${url.pathname}`, `${server.url}/authorize`)
      assert.deepEqual(Object.fromEntries(url.searchParams), {
        response_type: "code",
        client_id: CANARY.clientId,
        redirect_uri: redirectUri,
        scope: "b a",
        state: "s-1",
        show_dialog: "true",
        code_challenge: "ch",
        code_challenge_method: "S256"
      })
      const bare = new URL(provider.getAuthorizationUrl())
      assert.deepEqual([...bare.searchParams.keys()], ["response_type", "client_id", "redirect_uri"])
      await provider.close()
    }
  },
  {
    id: "beginAuthorization: a fresh random state and the S256 challenge of a 43-character verifier",
    run: async (driver, server) => {
      const oauth = ok(await driver.oauthClient(credentials(server, { redirectUri })))
      const first = await oauth.beginAuthorization()
      const second = await oauth.beginAuthorization()
      assert.notEqual(first.state, second.state)
      assert.equal(first.codeVerifier.length, 43)
      const url = new URL(first.url)
      assert.equal(url.searchParams.get("state"), first.state)
      assert.equal(url.searchParams.get("code_challenge_method"), "S256")
      assert.equal(
        url.searchParams.get("code_challenge"),
        base64url(createHash("sha256").update(first.codeVerifier).digest())
      )
    }
  },
  {
    id: "callback: the state is checked first (a forged callback with an error is a state mismatch)",
    run: async (driver) => {
      const forged = failure(
        await driver.parseResponseUrl("http://127.0.0.1:8123/callback?error=access_denied&state=other", "expected"),
        "AuthenticationError"
      )
      assert.match(forged.message, /state/i)
      failure(await driver.parseResponseUrl("http://127.0.0.1:8123/callback?code=c", "expected"), "AuthenticationError")
      assert.equal(ok(await driver.parseResponseUrl("?code=the-code&state=expected", "expected")), "the-code")
    }
  },
  {
    id: "callback: an error parameter and a missing code are AuthenticationErrors; a bare query string is accepted",
    run: async (driver) => {
      const denied = failure(
        await driver.parseResponseUrl("http://127.0.0.1:8123/callback?error=access_denied&error_description=no"),
        "AuthenticationError"
      )
      assert.match(denied.message, /access_denied/)
      failure(await driver.parseResponseUrl("http://127.0.0.1:8123/callback?state=x"), "AuthenticationError")
      assert.equal(ok(await driver.parseResponseUrl("code=abc")), "abc")
    }
  },
  {
    id: "callback: a repeated state, code or error parameter is an AuthenticationError (RFC 6749 §3.1)",
    run: async (driver) => {
      for (const query of ["code=a&code=b&state=s", "code=a&state=s&state=s", "code=a&state=s&error=x&error=y"]) {
        failure(
          await driver.parseResponseUrl(`http://127.0.0.1:8123/callback?${query}`, "s"),
          "AuthenticationError",
          query
        )
      }
    }
  },
  {
    id: "completeAuthorization: iss must equal the issuer (RFC 9207), checked before any token request",
    run: async (driver, server) => {
      const oauth = ok(await driver.oauthClient(credentials(server, { redirectUri })))
      const pending = await oauth.beginAuthorization()
      const callback = (iss: string) =>
        `${redirectUri}?code=${CANARY.code}&state=${pending.state}&iss=${encodeURIComponent(iss)}`
      failure(await oauth.completeAuthorization(callback("https://evil.example"), pending), "AuthenticationError")
      failure(await oauth.completeAuthorization(callback(`${server.url}/`), pending), "AuthenticationError")
      assert.equal(server.tokenRequests().length, 0)
      const token = ok(await oauth.completeAuthorization(callback(server.url), pending))
      assert.equal(token.refreshToken, "refresh-1")
      assert.equal(server.tokenRequests().length, 1)
    }
  },
  {
    id: "completeAuthorization: after a transport failure the same callback can be completed again",
    run: async (driver, server) => {
      const oauth = ok(await driver.oauthClient(credentials(server, { redirectUri, maxRetries: 0 })))
      const pending = await oauth.beginAuthorization()
      const callback = `${redirectUri}?code=${CANARY.code}&state=${pending.state}`
      server.onToken({ status: 500 })
      failure(await oauth.completeAuthorization(callback, pending), "TransportError")
      const token = ok(await oauth.completeAuthorization(callback, pending))
      assert.equal(token.accessToken, "token-2")
    }
  },
  {
    id: "never signed in: AuthenticationError with payload.error no_token at once, no request",
    run: async (driver, server) => {
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri })))
      const error = failure(await provider.getAccessToken(), "AuthenticationError")
      assert.match(error.shown, /no_token/)
      assert.equal(server.tokenRequests().length, 0)
      await provider.close()
    }
  },
  {
    id: "OAuthClient.completeAuthorization remembers nothing: the same callback twice is two token requests (SI1)",
    run: async (driver, server) => {
      const oauth = ok(await driver.oauthClient(credentials(server, { redirectUri })))
      const pending = await oauth.beginAuthorization()
      const callback = `${redirectUri}?code=${CANARY.code}&state=${pending.state}`
      ok(await oauth.completeAuthorization(callback, pending))
      // the server decides what a reused code gets; the protocol sends it (the owner of the sign-in remembers)
      ok(await oauth.completeAuthorization(callback, pending))
      assert.equal(server.tokenRequests().length, 2)
    }
  },
  {
    id: "AuthorizationCode.completeAuthorization: single-use once the token endpoint answered; a 5xx gives it back",
    run: async (driver, server) => {
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri, maxRetries: 0 })))
      const pending = await provider.beginAuthorization()
      const callback = `${redirectUri}?code=${CANARY.code}&state=${pending.state}`
      // a forged callback uses nothing up
      failure(
        await provider.completeAuthorization(`${redirectUri}?code=x&state=forged`, pending),
        "AuthenticationError"
      )
      server.onToken({ status: 503 })
      failure(await provider.completeAuthorization(callback, pending), "TransportError")
      ok(await provider.completeAuthorization(callback, pending))
      const again = failure(await provider.completeAuthorization(callback, pending), "AuthenticationError")
      assert.match(again.message, /single-use/)
      assert.equal(server.tokenRequests().length, 2)
      await provider.close()
    }
  },
  {
    id: "redirect URIs: https or http on a loopback IP literal; localhost, other http hosts, ftp, userinfo, fragments refused",
    run: async (driver, server) => {
      for (const accepted of ["https://app.example/callback", "http://127.0.0.1:8123/cb", "http://[::1]:8123/cb"]) {
        const oauth = await driver.oauthClient(credentials(server, { redirectUri: accepted }))
        ok(oauth, accepted)
      }
      for (const refused of [
        "http://localhost:8123/cb",
        "http://evil.example/cb",
        "ftp://127.0.0.1/cb",
        "http://user:pw@127.0.0.1:8123/cb",
        "http://127.0.0.1:8123/cb#frag"
      ]) {
        failure(await driver.oauthClient(credentials(server, { redirectUri: refused })), "ConfigurationError", refused)
        failure(
          await driver.authorizationCode(credentials(server, { redirectUri: refused })),
          "ConfigurationError",
          refused
        )
      }
    }
  },
  {
    id: "redirect URIs: a non-canonical spelling of a loopback address is refused, naming the canonical form",
    run: async (driver, server) => {
      for (const spelling of ["http://127.1:8123/cb", "HTTP://127.0.0.1:8123/cb", "http://127.0.0.1.:8123/cb"]) {
        const error = failure(
          await driver.oauthClient(credentials(server, { redirectUri: spelling })),
          "ConfigurationError",
          spelling
        )
        assert.match(error.message, /127\.0\.0\.1/, spelling)
      }
      failure(
        await driver.oauthClient(credentials(server, { redirectUri: "http://127.0.0.1:0/cb" })),
        "ConfigurationError",
        "port 0"
      )
    }
  }
]
