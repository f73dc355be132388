/** `AsyncClientCredentials` and `AsyncAuthorizationCode` over a mock HTTP client: single flight, errors, caches. */
import {
  type FacadeLine,
  isolateEnv,
  type MockAnswer,
  type MockHandler,
  type RecordedRequest,
  type SdkError,
  type TokenInfoShape
} from "./line.js"

/** The suite on one line. */
export const promiseProviders = (line: FacadeLine): void => {
  const { describe, expect, it } = line.test
  const {
    AsyncAuthorizationCode,
    AsyncClientCredentials,
    AuthenticationError,
    ConfigurationError,
    ServiceError,
    TokenCache,
    TokenInfo,
    TransportError
  } = line.facade
  const { MockHttpClient } = line.testing
  const { Effect, Redacted } = line.effect
  const tokenResponse = (accessToken: string, extra: Record<string, unknown> = {}) =>
    MockHttpClient.json({ access_token: accessToken, token_type: "Bearer", expires_in: 3600, ...extra })

  /** A mock HttpClient layer plus the list of requests it saw. */
  const mock = (answer: (request: RecordedRequest, call: number) => MockAnswer) => {
    const requests: Array<RecordedRequest> = []
    const handler: MockHandler = (request, call) => {
      requests.push(request)
      return answer(request, call)
    }
    return { requests, httpClient: MockHttpClient.layer(handler) }
  }

  const credentials = { clientId: "client-id", clientSecret: "client-secret" }
  isolateEnv(line.test)

  describe("AsyncClientCredentials", () => {
    it("resolves a plain string token and serves the cached one without a request", async () => {
      const { requests, httpClient } = mock((_request, call) => tokenResponse(`token-${call}`))
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      expect(await provider.getAccessToken()).toBe("token-0")
      expect(await provider.getAccessToken()).toBe("token-0")
      expect(requests).toHaveLength(1)
      expect(requests[0]!.form.get("grant_type")).toBe("client_credentials")
    })

    it("shares one request between 1,000 concurrent callers", async () => {
      const { requests, httpClient } = mock(() => Effect.delay(Effect.succeed(tokenResponse("shared")), "20 millis"))
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const tokens = await Promise.all(Array.from({ length: 1000 }, () => provider.getAccessToken()))
      expect(new Set(tokens)).toEqual(new Set(["shared"]))
      expect(requests).toHaveLength(1)
    })

    it("concurrent callers on a stale token share one pending Promise; a settled one is not reused", async () => {
      const { requests, httpClient } = mock((_request, call) =>
        Effect.delay(Effect.succeed(tokenResponse(`token-${call}`)), "5 millis")
      )
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const first = provider.getAccessToken()
      expect(provider.getAccessToken()).toBe(first)
      expect(await first).toBe("token-0")
      const cached = provider.getAccessToken()
      expect(cached).not.toBe(first)
      expect(await cached).toBe("token-0")
      // a 401 on the token: the forced refresh renews, and the next stale-path call is a new run
      expect(await provider.forceRefresh("token-0")).toBe("token-1")
      expect(requests).toHaveLength(2)
    })

    it("a call after close() is refused even while a shared call is still pending", async () => {
      const { httpClient } = mock(() => Effect.delay(Effect.succeed(tokenResponse("late")), "50 millis"))
      const provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const pending = provider.getAccessToken()
      pending.catch(() => undefined)
      const closing = provider.close()
      await expect(provider.getAccessToken()).rejects.toBeInstanceOf(ConfigurationError)
      await closing
    })

    it("a failed shared call rejects every joiner with the same error, and the next call starts anew", async () => {
      const { requests, httpClient } = mock((_request, call) =>
        call === 0
          ? MockHttpClient.json({ error: "invalid_client" }, 401)
          : Effect.delay(Effect.succeed(tokenResponse("after")), "5 millis")
      )
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => provider.getAccessToken()))
      const reasons = new Set(results.map((result) => (result.status === "rejected" ? result.reason : undefined)))
      expect(reasons.size).toBe(1)
      expect([...reasons][0]).toBeInstanceOf(AuthenticationError)
      expect(await provider.getAccessToken()).toBe("after")
      expect(requests).toHaveLength(2)
    })

    it("throws ConfigurationError from the constructor when credentials are missing, naming the variable", () => {
      const { httpClient } = mock(() => tokenResponse("unused"))
      let thrown: unknown
      try {
        new AsyncClientCredentials({ clientSecret: "s", httpClient })
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(ConfigurationError)
      expect(thrown).toBeInstanceOf(ServiceError)
      expect((thrown as SdkError).message).toContain("SERVICE_SDK_CLIENT_ID")
    })

    it("reads credentials from the environment", async () => {
      process.env.SERVICE_SDK_CLIENT_ID = "env-id"
      process.env.SERVICE_SDK_CLIENT_SECRET = "env-secret"
      const { requests, httpClient } = mock(() => tokenResponse("from-env"))
      await using provider = new AsyncClientCredentials({ httpClient })
      expect(await provider.getAccessToken()).toBe("from-env")
      const basic = Buffer.from(requests[0]!.headers.authorization!.slice("Basic ".length), "base64").toString()
      expect(basic).toBe("env-id:env-secret")
    })

    it("rejects with the SDK's own AuthenticationError instance, never a FiberFailure", async () => {
      const { httpClient } = mock(() =>
        MockHttpClient.json({ error: "invalid_client", error_description: "Invalid client" }, 401)
      )
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const error = await provider.getAccessToken().then(
        () => undefined,
        (e: unknown) => e
      )
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(error).toBeInstanceOf(ServiceError)
      expect(error).toMatchObject({ _tag: "AuthenticationError", status: 401, payload: { error: "invalid_client" } })
      expect(Object.getPrototypeOf(error).constructor.name).not.toContain("FiberFailure")
    })

    it("rejects with TransportError after the retries when the network fails, and works once it is back", async () => {
      let down = true
      const { requests, httpClient } = mock(() =>
        down ? { transportError: "connect ECONNREFUSED" } : tokenResponse("back")
      )
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient, maxRetries: 0 })
      await expect(provider.getAccessToken()).rejects.toBeInstanceOf(TransportError)
      down = false
      expect(await provider.getAccessToken()).toBe("back")
      expect(requests).toHaveLength(2)
    })

    it("forceRefresh returns a new token when the rejected one is cached", async () => {
      const { requests, httpClient } = mock((_request, call) => tokenResponse(`token-${call}`))
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const first = await provider.getAccessToken()
      expect(await provider.forceRefresh(first)).toBe("token-1")
      expect(await provider.forceRefresh(first)).toBe("token-1")
      expect(requests).toHaveLength(2)
    })

    it("accepts a plain Promise token cache", async () => {
      const stored: Array<TokenInfoShape> = []
      const cache = {
        get: async () => stored.at(-1),
        set: async (token: TokenInfoShape) => {
          stored.push(token)
        }
      }
      const { requests, httpClient } = mock(() => tokenResponse("cached-in-plain"))
      await using first = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: cache })
      expect(await first.getAccessToken()).toBe("cached-in-plain")
      expect(stored).toHaveLength(1)
      expect(stored[0]).toBeInstanceOf(TokenInfo)
      await using second = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: cache })
      expect(await second.getAccessToken()).toBe("cached-in-plain")
      expect(requests).toHaveLength(1)
    })

    it("accepts an Effect TokenCache", async () => {
      const cache = Effect.runSync(
        TokenCache.memory(new TokenInfo({ accessToken: Redacted.make("preloaded"), expiresAt: 4_102_444_800 }))
      )
      const { requests, httpClient } = mock(() => tokenResponse("unused"))
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: cache })
      expect(await provider.getAccessToken()).toBe("preloaded")
      expect(requests).toHaveLength(0)
    })

    it("a failing plain cache rejects with TokenCacheError", async () => {
      const cache = {
        get: async () => {
          throw new Error("disk on fire")
        },
        set: async () => {}
      }
      const { httpClient } = mock(() => tokenResponse("unused"))
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient, tokenCache: cache })
      await expect(provider.getAccessToken()).rejects.toMatchObject({ _tag: "TokenCacheError" })
    })

    it("`await using` closes the provider: later calls reject with ConfigurationError", async () => {
      const { httpClient } = mock(() => tokenResponse("t"))
      let escaped: any
      {
        await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
        escaped = provider
        expect(await provider.getAccessToken()).toBe("t")
      }
      await expect(escaped.getAccessToken()).rejects.toBeInstanceOf(ConfigurationError)
      await escaped.close()
    })
  })

  describe("AsyncAuthorizationCode", () => {
    const options = { ...credentials, redirectUri: "http://127.0.0.1:8765/callback", scope: ["user-read-private"] }

    it("parseResponseUrl is static and throws AuthenticationError", () => {
      expect(
        AsyncAuthorizationCode.parseResponseUrl("http://127.0.0.1/cb?code=abc&state=s", { expectedState: "s" })
      ).toBe("abc")
      expect(() => AsyncAuthorizationCode.parseResponseUrl("?error=access_denied")).toThrow(AuthenticationError)
      expect(() => AsyncAuthorizationCode.parseResponseUrl("?code=abc&state=x", { expectedState: "y" })).toThrow(
        AuthenticationError
      )
    })

    it("builds the authorization URL", async () => {
      const { httpClient } = mock(() => tokenResponse("unused"))
      await using provider = new AsyncAuthorizationCode({ ...options, httpClient, authUrl: "http://127.0.0.1:9" })
      const url = new URL(provider.getAuthorizationUrl({ state: "st", showDialog: true }))
      expect(url.origin + url.pathname).toBe("http://127.0.0.1:9/authorize")
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: "code",
        client_id: "client-id",
        redirect_uri: "http://127.0.0.1:8765/callback",
        scope: "user-read-private",
        state: "st",
        show_dialog: "true"
      })
    })

    it("exchanges a code, caches the tokens and refreshes with the refresh token", async () => {
      const { requests, httpClient } = mock((request) =>
        request.form.get("grant_type") === "authorization_code"
          ? tokenResponse("user-token", { refresh_token: "refresh-1", expires_in: 0 })
          : tokenResponse("refreshed-token")
      )
      await using provider = new AsyncAuthorizationCode({ ...options, httpClient, skew: 0 })
      const info = await provider.exchangeCode("the-code")
      expect(info).toBeInstanceOf(TokenInfo)
      expect(Redacted.value(info.accessToken)).toBe("user-token")
      expect(requests[0]!.form.get("code")).toBe("the-code")
      expect(requests[0]!.form.get("redirect_uri")).toBe(options.redirectUri)
      // expires_in 0: the exchanged token is already stale, so the next call refreshes
      expect(await provider.getAccessToken()).toBe("refreshed-token")
      expect(requests[1]!.form.get("grant_type")).toBe("refresh_token")
      expect(requests[1]!.form.get("refresh_token")).toBe("refresh-1")
    })

    it("rejects getAccessToken with AuthenticationError before any code was exchanged", async () => {
      const { requests, httpClient } = mock(() => tokenResponse("unused"))
      await using provider = new AsyncAuthorizationCode({ ...options, httpClient })
      const error = await provider.getAccessToken().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect((error as SdkError).message).toContain("exchangeCode")
      expect(requests).toHaveLength(0)
    })

    it("rejects an invalid_grant code exchange with AuthenticationError carrying the payload", async () => {
      const { httpClient } = mock(() =>
        MockHttpClient.json({ error: "invalid_grant", error_description: "Invalid authorization code" }, 400)
      )
      await using provider = new AsyncAuthorizationCode({ ...options, httpClient })
      await expect(provider.exchangeCode("bad")).rejects.toMatchObject({
        _tag: "AuthenticationError",
        status: 400,
        payload: { error: "invalid_grant", error_description: "Invalid authorization code" }
      })
    })
  })
}
