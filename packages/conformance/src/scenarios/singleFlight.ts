/** the contract (4): expiry, single flight and the outcome its waiters share. */
import assert from "node:assert/strict"
import type { Driver } from "../driver.js"
import type { FakeServer } from "../fakeServer.js"
import type { Scenario } from "../scenario.js"
import { CANARY, credentials, failure, ok, redirectUri, sleep } from "../support.js"

/**
 * `UserTokens` with user "u" signed in on an expired token, and that user's renewal under way: its token request has
 * reached the server, which answers it 2 s later (time enough, on a busy machine, for what the scenario does meanwhile).
 */
const renewalUnderWay = async (driver: Driver, server: FakeServer) => {
  const users = ok(await driver.userTokens(credentials(server)))
  // the wall clock: the server and the provider run live
  ok(await users.signIn("u", { accessToken: "stale", refreshToken: "refresh-u", expiresAt: Date.now() / 1000 - 1 }))
  server.setTokenDelay(2000)
  const renewing = users.getAccessToken("u")
  for (let waited = 0; server.tokenRequests().length === 0 && waited < 10_000; waited += 20) await sleep(20)
  assert.equal(server.tokenRequests().length, 1)
  return { renewing, users }
}

export const singleFlight: ReadonlyArray<Scenario> = [
  {
    id: "single flight: 50 concurrent callers, one token request, one token",
    run: async (driver, server) => {
      server.setTokenDelay(100)
      const provider = ok(await driver.clientCredentials(credentials(server)))
      const tokens = await Promise.all(Array.from({ length: 50 }, () => provider.getAccessToken()))
      assert.deepEqual([...new Set(tokens.map((outcome) => ok(outcome)))], ["token-1"])
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "a cached token is served while fresh: no second request",
    run: async (driver, server) => {
      const provider = ok(await driver.clientCredentials(credentials(server)))
      ok(await provider.getAccessToken())
      assert.equal(ok(await provider.getAccessToken()), "token-1")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "a token inside the skew is renewed",
    run: async (driver, server) => {
      server.setTokenLifetime(100)
      const provider = ok(await driver.clientCredentials(credentials(server, { skew: "120 seconds" })))
      ok(await provider.getAccessToken())
      // lifetime 100 s ≤ 2 × skew: the short-lived rule renews at half the lifetime (50 s), so not yet
      assert.equal(ok(await provider.getAccessToken()), "token-1")
      server.setTokenLifetime(1)
      assert.equal(ok(await provider.forceRefresh("token-1")), "token-2")
      // 1 s: renewed at 0.5 s
      await sleep(800)
      assert.equal(ok(await provider.getAccessToken()), "token-3")
      assert.equal(server.tokenRequests().length, 3)
      await provider.close()
    }
  },
  {
    id: "short-lived tokens are renewed at half their lifetime, never on every call",
    run: async (driver, server) => {
      server.setTokenLifetime(2)
      const provider = ok(await driver.clientCredentials(credentials(server)))
      for (let i = 0; i < 5; i++) assert.equal(ok(await provider.getAccessToken()), "token-1")
      await sleep(1300)
      assert.equal(ok(await provider.getAccessToken()), "token-2")
      assert.equal(server.tokenRequests().length, 2)
      await provider.close()
    }
  },
  {
    id: "a sign-in's first short-lived token is not renewed at the first call (it records issued_at)",
    run: async (driver, server) => {
      server.onToken({ body: { access_token: "first", token_type: "Bearer", expires_in: 4, refresh_token: "r-1" } })
      const provider = ok(await driver.authorizationCode(credentials(server, { redirectUri })))
      ok(await provider.exchangeCode(CANARY.code, CANARY.verifier))
      assert.equal(ok(await provider.getAccessToken()), "first")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "a failed fetch is not cached: the next call tries again",
    run: async (driver, server) => {
      server.onToken({ status: 401, body: { error: "invalid_client" } })
      const provider = ok(await driver.clientCredentials(credentials(server)))
      failure(await provider.getAccessToken(), "AuthenticationError")
      assert.equal(ok(await provider.getAccessToken()), "token-2")
      assert.equal(server.tokenRequests().length, 2)
      await provider.close()
    }
  },
  {
    id: "the callers waiting on one renewal share its failure: one request, all fail together",
    run: async (driver, server) => {
      server.setTokenDelay(150)
      server.onToken({ status: 401, body: { error: "invalid_client" } })
      const provider = ok(await driver.clientCredentials(credentials(server)))
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => provider.getAccessToken()))
      for (const outcome of outcomes) failure(outcome, "AuthenticationError")
      assert.equal(server.tokenRequests().length, 1)
      await provider.close()
    }
  },
  {
    id: "forceRefresh: the rejected token is renewed once; an older rejected token gets the current one, no request",
    run: async (driver, server) => {
      server.setTokenDelay(50)
      const provider = ok(await driver.clientCredentials(credentials(server)))
      ok(await provider.getAccessToken())
      const renewed = await Promise.all(Array.from({ length: 5 }, () => provider.forceRefresh("token-1")))
      assert.deepEqual([...new Set(renewed.map((outcome) => ok(outcome)))], ["token-2"])
      assert.equal(ok(await provider.forceRefresh("token-1")), "token-2")
      assert.equal(server.tokenRequests().length, 2)
      await provider.close()
    }
  },
  {
    id: "UserTokens: a sign-out while that user's renewal is under way wins: afterwards no token is served or renewed",
    run: async (driver, server) => {
      const { renewing, users } = await renewalUnderWay(driver, server)
      ok(await users.signOut("u"))
      // the call that started before the sign-out may get the renewed token (the sign-out waited for it) or fail
      await renewing
      server.setTokenDelay(0)
      // signed out in this process too: no token from memory, no renewal
      failure(await users.getAccessToken("u"), "AuthenticationError")
      assert.equal(server.tokenRequests().length, 1)
      await users.close()
    }
  },
  {
    id: "UserTokens: a stale token whose entry was cleared elsewhere: AuthenticationError no_token, no request",
    run: async (driver, server) => {
      const users = ok(await driver.userTokens(credentials(server)))
      ok(await users.signIn("u", { accessToken: "stale", refreshToken: "refresh-u", expiresAt: Date.now() / 1000 - 1 }))
      ok(await users.clearElsewhere("u"))
      const error = failure(await users.getAccessToken("u"), "AuthenticationError")
      assert.match(error.shown, /not signed in/)
      assert.match(error.shown, /no_token/)
      assert.equal(server.tokenRequests().length, 0)
      await users.close()
    }
  },
  {
    id: "UserTokens: a sign-in while that user's renewal is under way lands after it: the renewal serves its token, then the sign-in's",
    run: async (driver, server) => {
      const { renewing, users } = await renewalUnderWay(driver, server)
      const signedIn = users.signIn("u", {
        accessToken: "signed-in",
        refreshToken: "refresh-u-2",
        expiresAt: Date.now() / 1000 + 3600
      })
      // the sign-in waits for the renewal's turn: the renewal is not refused by it, and serves the token it got
      assert.equal(ok(await renewing), "token-1")
      ok(await signedIn)
      server.setTokenDelay(0)
      assert.equal(ok(await users.getAccessToken("u")), "signed-in")
      assert.equal(server.tokenRequests().length, 1)
      await users.close()
    }
  },
  {
    id: "UserTokens: an entry cleared elsewhere during that user's renewal is a sign-out: not served, kept or written back",
    run: async (driver, server) => {
      const { renewing, users } = await renewalUnderWay(driver, server)
      // another process signs the user out while the renewal waits for its answer
      ok(await users.clearElsewhere("u"))
      const error = failure(await renewing, "AuthenticationError")
      assert.match(error.message, /signed out/)
      server.setTokenDelay(0)
      failure(await users.getAccessToken("u"), "AuthenticationError")
      assert.equal(server.tokenRequests().length, 1)
      await users.close()
    }
  }
]
