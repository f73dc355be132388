/** `AsyncUserTokens`: per-user tokens over plain Promise and Effect stores, as an `authProvider`, bad options. */
import { type FacadeLine, isolateEnv, type MockHandler, type RecordedRequest, type TokenInfoShape } from "./line.js"

/** The suite on one line. */
export const promiseUserTokens = (line: FacadeLine): void => {
  const { describe, expect, it } = line.test
  const {
    AsyncServiceClient,
    AsyncUserTokens,
    AuthenticationError,
    ConfigurationError,
    TokenCacheError,
    TokenInfo,
    TokenStore
  } = line.facade
  const { MockHttpClient } = line.testing
  const { Clock, Effect, Redacted } = line.effect
  const { signOutWithoutClear } = line.wording
  const API_URL = "http://127.0.0.1:4020/v1"
  const credentials = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
  isolateEnv(line.test)

  /** Token endpoint: `<refresh token>:renewed`; API: `/me` answers the user the bearer names; 401 for `rejected`. */
  const mock = (rejected: ReadonlySet<string> = new Set()) => {
    const requests: Array<RecordedRequest> = []
    const handler: MockHandler = (request) => {
      requests.push(request)
      if (request.url.pathname === "/api/token") {
        return MockHttpClient.json({
          access_token: `${request.form.get("refresh_token")}:renewed`,
          token_type: "Bearer",
          expires_in: 3600
        })
      }
      const bearer = (request.headers.authorization ?? "").replace(/^Bearer /, "")
      if (rejected.has(bearer)) return MockHttpClient.json({ error: { status: 401, message: "expired" } }, 401)
      return MockHttpClient.json({ id: bearer.split("-")[0], display_name: bearer })
    }
    return { requests, httpClient: MockHttpClient.layer(handler) }
  }

  const token = (access: string, refresh: string, expiresAt = Effect.runSync(Clock.currentTimeMillis) / 1000 + 3600) =>
    new TokenInfo({ accessToken: Redacted.make(access), refreshToken: Redacted.make(refresh), expiresAt })

  /** A plain Promise store over a Map (what a user without Effect writes). */
  const plainStore = () => {
    const entries = new Map<string, TokenInfoShape>()
    return {
      entries,
      store: (userId: string) => ({
        get: async () => entries.get(userId),
        set: async (t: TokenInfoShape) => void entries.set(userId, t),
        clear: async () => void entries.delete(userId)
      })
    }
  }

  describe("AsyncUserTokens", () => {
    it("per-user tokens with a plain Promise store: signIn, getAccessToken, one refresh per user, signOut", async () => {
      const { httpClient, requests } = mock()
      const { entries, store } = plainStore()
      await using users = new AsyncUserTokens({ ...credentials, store, httpClient })
      await users.signIn("alice", token("alice-token", "alice-refresh"))
      await users.signIn("bob", token("bob-stale", "bob-refresh", 0))
      expect(await users.getAccessToken("alice")).toBe("alice-token")
      const bob = await Promise.all(Array.from({ length: 50 }, () => users.getAccessToken("bob")))
      expect(new Set(bob)).toEqual(new Set(["bob-refresh:renewed"]))
      expect(requests.map((r) => r.form.get("refresh_token"))).toEqual(["bob-refresh"])
      await users.signOut("alice")
      expect(entries.has("alice")).toBe(false)
      const error = await users.getAccessToken("alice").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect((error as Error).message).toContain("not signed in")
      expect(await users.getAccessToken("bob")).toBe("bob-refresh:renewed")
    })

    it("forUser is an authProvider for AsyncServiceClient: each client calls with its user's bearer; 401 → that user's refresh", async () => {
      const { httpClient, requests } = mock(new Set(["alice-token"]))
      await using users = new AsyncUserTokens({
        ...credentials,
        store: Effect.runSync(TokenStore.memory()),
        httpClient
      })
      await users.signIn("alice", token("alice-token", "alice-refresh"))
      await users.signIn("bob", token("bob-token", "bob-refresh"))
      await using alice = new AsyncServiceClient({ authProvider: users.forUser("alice"), apiUrl: API_URL, httpClient })
      await using bob = new AsyncServiceClient({ authProvider: users.forUser("bob"), apiUrl: API_URL, httpClient })
      const [a, b] = await Promise.all([alice.users.me(), bob.users.me()])
      expect(a.display_name).toBe("alice-refresh:renewed")
      expect(b.id).toBe("bob")
      const refreshes = requests.filter((r) => r.url.pathname === "/api/token")
      expect(refreshes.map((r) => r.form.get("refresh_token"))).toEqual(["alice-refresh"])
      expect(await users.forUser("bob").getAccessToken()).toBe("bob-token")
    })

    it("the constructor throws ConfigurationError synchronously for bad options, even with an asynchronous httpClient", () => {
      const { httpClient } = mock()
      const asyncClient = line.slowLayer(httpClient)
      const { store } = plainStore()
      expect(() => new AsyncUserTokens({ ...credentials, store, idleTimeToLive: -5, httpClient: asyncClient })).toThrow(
        ConfigurationError
      )
      expect(() => new AsyncUserTokens({ ...credentials, store: undefined as never, httpClient: asyncClient })).toThrow(
        /store/
      )
      expect(() => new AsyncUserTokens({ ...credentials, store, timeout: "nope" as never, httpClient })).toThrow(
        /timeout/
      )
      const users = new AsyncUserTokens({ ...credentials, store, httpClient })
      expect(() => users.forUser(7 as never)).toThrow(ConfigurationError)
      return users.close()
    })

    it("works over an asynchronous httpClient layer", async () => {
      const { httpClient } = mock()
      const asyncClient = line.slowLayer(httpClient)
      const { store } = plainStore()
      await using users = new AsyncUserTokens({ ...credentials, store, httpClient: asyncClient })
      await users.signIn("alice", token("alice-stale", "alice-refresh", 0))
      expect(await users.forUser("alice").getAccessToken()).toBe("alice-refresh:renewed")
    })

    it("a bad user id in a Promise method rejects with ConfigurationError; close() makes later calls reject", async () => {
      const { httpClient } = mock()
      const { store } = plainStore()
      const users = new AsyncUserTokens({ ...credentials, store, httpClient })
      await expect(users.getAccessToken("" as string)).rejects.toBeInstanceOf(ConfigurationError)
      await users.close()
      await expect(users.signIn("alice", token("a", "b"))).rejects.toBeInstanceOf(ConfigurationError)
    })

    it("signOut over a plain store whose caches have no clear: TokenCacheError saying so, the tokens kept", async () => {
      const { httpClient } = mock()
      const entries = new Map<string, TokenInfoShape>()
      const store = (userId: string) => ({
        get: async () => entries.get(userId),
        set: async (t: TokenInfoShape) => void entries.set(userId, t)
      })
      await using users = new AsyncUserTokens({ ...credentials, store, httpClient })
      await users.signIn("alice", token("alice-token", "alice-refresh"))
      const error = await users.signOut("alice").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TokenCacheError)
      // the same error, worded by each line (FacadeLine.wording)
      expect((error as Error).message).toMatch(signOutWithoutClear)
      expect(await users.getAccessToken("alice")).toBe("alice-token")
    })
  })
}
