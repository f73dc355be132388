/**
 * `AsyncServiceClient`: its token sources (a fixed token, client credentials, a provider, the environment) and its
 * methods (the SDK's own errors, resources, schemas, close), over a mock HTTP client.
 */
import { type FacadeLine, isolateEnv, type MockAnswer, type RecordedRequest, type SdkError, thrownBy } from "./line.js"

/** The suite on one line. */
export const promiseClient = (line: FacadeLine): void => {
  const { describe, expect, it } = line.test
  const {
    ApiError,
    AsyncClientCredentials,
    AsyncServiceClient,
    AuthenticationError,
    ConfigurationError,
    RateLimitError,
    ServiceError
  } = line.facade
  const { MockHttpClient } = line.testing
  const { Schema } = line.effect

  const AUTH_URL = "http://127.0.0.1:4010"
  const API_URL = "http://127.0.0.1:4020/v1"
  const credentials = { clientId: "client-id", clientSecret: "client-secret", authUrl: AUTH_URL, apiUrl: API_URL }

  const isTokenCall = (request: RecordedRequest) => request.url.href === `${AUTH_URL}/api/token`

  /** A mock HttpClient layer routing token calls (`tok-1`, `tok-2`, …) and API calls, and the requests it saw. */
  const mock = (
    api: (request: RecordedRequest, call: number) => MockAnswer = () =>
      MockHttpClient.json({ id: "u1", display_name: null })
  ) => {
    const requests: Array<RecordedRequest> = []
    let tokens = 0
    let calls = 0
    const handler = (request: RecordedRequest) => {
      requests.push(request)
      return isTokenCall(request)
        ? MockHttpClient.json({ access_token: `tok-${++tokens}`, token_type: "Bearer", expires_in: 3600 })
        : api(request, calls++)
    }
    return {
      httpClient: MockHttpClient.layer(handler),
      tokenRequests: () => requests.filter(isTokenCall),
      apiRequests: () => requests.filter((request) => !isTokenCall(request))
    }
  }

  isolateEnv(line.test)

  describe("AsyncServiceClient: token sources", () => {
    it("{ accessToken }: the fixed token on every request, no token endpoint", async () => {
      const { httpClient, apiRequests, tokenRequests } = mock()
      await using client = new AsyncServiceClient({ accessToken: "fixed", apiUrl: API_URL, httpClient })
      expect(await client.users.me()).toEqual({ id: "u1", display_name: null })
      expect(apiRequests().map((request) => request.headers.authorization)).toEqual(["Bearer fixed"])
      expect(tokenRequests()).toHaveLength(0)
    })

    it("{ clientId, clientSecret }: a provider of its own, one token request for many calls", async () => {
      const { httpClient, apiRequests, tokenRequests } = mock()
      await using client = new AsyncServiceClient({ ...credentials, httpClient })
      await Promise.all([client.users.me(), client.users.me(), client.request("GET", "/me")])
      expect(tokenRequests()).toHaveLength(1)
      expect(apiRequests().map((request) => request.headers.authorization)).toEqual([
        "Bearer tok-1",
        "Bearer tok-1",
        "Bearer tok-1"
      ])
    })

    it("{ authProvider }: uses it, and close() leaves it open", async () => {
      const { httpClient, tokenRequests } = mock()
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      const client = new AsyncServiceClient({ authProvider: provider, apiUrl: API_URL, httpClient })
      await client.users.me()
      await client.close()
      expect(await provider.getAccessToken()).toBe("tok-1")
      expect(tokenRequests()).toHaveLength(1)
      await expect(client.users.me()).rejects.toBeInstanceOf(ConfigurationError)
    })

    it("{ authProvider } with a 401: one forced refresh through the provider", async () => {
      const { httpClient, tokenRequests } = mock((request) =>
        request.headers.authorization === "Bearer tok-1"
          ? MockHttpClient.json({ error: { status: 401, message: "The access token expired" } }, 401)
          : MockHttpClient.json({ id: "u1", display_name: "U" })
      )
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      await using client = new AsyncServiceClient({ authProvider: provider, apiUrl: API_URL, httpClient })
      expect(await client.request("GET", "/me")).toEqual({ id: "u1", display_name: "U" })
      expect(tokenRequests()).toHaveLength(2)
      expect(await provider.getAccessToken()).toBe("tok-2")
    })

    it("any two sources: ConfigurationError thrown by the constructor", async () => {
      const { httpClient } = mock()
      await using provider = new AsyncClientCredentials({ ...credentials, httpClient })
      for (const options of [
        { accessToken: "t", clientId: "id" },
        { accessToken: "t", authProvider: provider },
        { authProvider: provider, clientSecret: "s" },
        { accessToken: "t", clientId: "id", clientSecret: "s" }
      ]) {
        const error = thrownBy(() => new AsyncServiceClient({ ...options, apiUrl: API_URL, httpClient }))
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error).toBeInstanceOf(ServiceError)
        expect((error as SdkError).message).toContain("exactly one of")
      }
    })

    it("no source and no environment: ConfigurationError naming the variables", () => {
      const { httpClient } = mock()
      const error = thrownBy(() => new AsyncServiceClient({ apiUrl: API_URL, httpClient }))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect((error as SdkError).message).toContain("SERVICE_SDK_CLIENT_ID")
    })

    it("one of clientId/clientSecret may come from the environment", async () => {
      process.env.SERVICE_SDK_CLIENT_SECRET = "env-secret"
      const { httpClient, tokenRequests } = mock()
      await using client = new AsyncServiceClient({ clientId: "id", authUrl: AUTH_URL, apiUrl: API_URL, httpClient })
      await client.users.me()
      expect(tokenRequests()[0]!.headers.authorization).toBe(`Basic ${btoa("id:env-secret")}`)
    })

    it("fromClientCredentials reads the environment", async () => {
      process.env.SERVICE_SDK_CLIENT_ID = "env-id"
      process.env.SERVICE_SDK_CLIENT_SECRET = "env-secret"
      process.env.SERVICE_SDK_AUTH_URL = AUTH_URL
      process.env.SERVICE_SDK_API_URL = API_URL
      const { httpClient, tokenRequests, apiRequests } = mock()
      await using client = AsyncServiceClient.fromClientCredentials({ httpClient })
      await client.users.me()
      expect(tokenRequests()[0]!.headers.authorization).toBe(`Basic ${btoa("env-id:env-secret")}`)
      expect(apiRequests()[0]!.url.href).toBe(`${API_URL}/me`)
    })

    it("the environment is not consulted for credentials when an access token is given", async () => {
      process.env.SERVICE_SDK_CLIENT_ID = "env-id"
      process.env.SERVICE_SDK_CLIENT_SECRET = "env-secret"
      const { httpClient, tokenRequests } = mock()
      await using client = new AsyncServiceClient({ accessToken: "fixed", apiUrl: API_URL, httpClient })
      await client.users.me()
      expect(tokenRequests()).toHaveLength(0)
    })

    it("an invalid apiUrl: ConfigurationError thrown by the constructor", () => {
      const { httpClient } = mock()
      const error = thrownBy(() => new AsyncServiceClient({ accessToken: "t", apiUrl: "nope", httpClient }))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect((error as SdkError).message).toContain("apiUrl")
    })
  })

  describe("AsyncServiceClient: methods", () => {
    it("rejects with the SDK's own error instances (ApiError with status, payload and message)", async () => {
      const { httpClient } = mock(() =>
        MockHttpClient.json({ error: { status: 404, message: "Non existing id" } }, 404)
      )
      await using client = new AsyncServiceClient({ accessToken: "t", apiUrl: API_URL, httpClient })
      const error = await client.albums.get("nope").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toBeInstanceOf(ServiceError)
      expect((error as SdkError).status).toBe(404)
      expect((error as SdkError).payload).toEqual({ error: { status: 404, message: "Non existing id" } })
      expect((error as SdkError).message).toContain("Non existing id")
      expect(String(error)).not.toContain("FiberFailure")
    })

    it("401 on a fixed token: AuthenticationError; 429 beyond maxRetryAfter: RateLimitError", async () => {
      const { httpClient } = mock((request) =>
        request.url.pathname === "/v1/me"
          ? MockHttpClient.json({ error: { status: 401, message: "The access token expired" } }, 401)
          : MockHttpClient.json({ error: { status: 429, message: "slow down" } }, 429, { "retry-after": "120" })
      )
      await using client = new AsyncServiceClient({ accessToken: "t", apiUrl: API_URL, httpClient })
      await expect(client.users.me()).rejects.toBeInstanceOf(AuthenticationError)
      const limited = await client.albums.get("a").catch((e: unknown) => e)
      expect(limited).toBeInstanceOf(RateLimitError)
      expect((limited as SdkError).retryAfter).toBeDefined()
    })

    it("resources: paths, queries and bodies like the Effect client", async () => {
      const { httpClient, apiRequests } = mock((request) => {
        switch (`${request.method} ${request.url.pathname}`) {
          case "GET /v1/me/tracks":
            return MockHttpClient.json({ items: [], total: 0, limit: 5, offset: 10, next: null })
          case "PUT /v1/me/tracks":
            return { status: 200 }
          case "GET /v1/me/following":
            return MockHttpClient.json({ artists: { items: [], cursors: { after: null }, total: 0 } })
          case "GET /v1/me/player":
            return { status: 204 }
          case "POST /v1/playlists/p%201/items":
            return MockHttpClient.json({ snapshot_id: "snap" }, 201)
          default:
            return MockHttpClient.json({ error: { status: 404, message: "no" } }, 404)
        }
      })
      await using client = new AsyncServiceClient({ accessToken: "t", apiUrl: API_URL, httpClient })
      expect((await client.library.savedTracks({ limit: 5, offset: 10 })).offset).toBe(10)
      expect(await client.library.saveTracks(["a", "b"])).toBeUndefined()
      expect((await client.follows.followedArtists({ limit: 3 })).artists.total).toBe(0)
      expect(await client.player.playbackState()).toBeUndefined()
      expect(await client.playlists.addItems("p 1", ["service:track:1"])).toEqual({ snapshot_id: "snap" })
      expect(apiRequests().map((request) => `${request.method} ${request.url.pathname}${request.url.search}`)).toEqual([
        "GET /v1/me/tracks?limit=5&offset=10",
        "PUT /v1/me/tracks?ids=a%2Cb",
        "GET /v1/me/following?type=artist&limit=3",
        "GET /v1/me/player",
        "POST /v1/playlists/p%201/items"
      ])
      expect(JSON.parse(apiRequests()[4]!.body)).toEqual({ uris: ["service:track:1"] })
    })

    it("request with a schema decodes; a mismatch rejects with ApiError", async () => {
      const { httpClient } = mock((_request, call) =>
        MockHttpClient.json(call === 0 ? { n: 1, extra: true } : { n: "x" })
      )
      await using client = new AsyncServiceClient({ accessToken: "t", apiUrl: API_URL, httpClient })
      const schema = Schema.Struct({ n: Schema.Number })
      expect(await client.request("GET", "/n", { schema })).toStrictEqual({ n: 1 })
      await expect(client.request("GET", "/n", { schema })).rejects.toBeInstanceOf(ApiError)
    })

    it("close() ends the client and the provider it created; await using closes it", async () => {
      const { httpClient } = mock()
      let escaped: any
      {
        await using client = new AsyncServiceClient({ ...credentials, httpClient })
        await client.users.me()
        escaped = client
      }
      await expect(escaped.users.me()).rejects.toBeInstanceOf(ConfigurationError)
      await escaped.close() // idempotent
    })
  })
}
