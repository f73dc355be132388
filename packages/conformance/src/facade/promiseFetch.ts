/**
 * The Promise facade's `fetch` option: plain code tests without a network. Every request (token and API) goes
 * through the given `fetch`; with `httpClient` too, or not a function, the constructor throws ConfigurationError.
 */
import type { FacadeLine } from "./line.js"

/** The suite on one line. */
export const promiseFetch = (line: FacadeLine): void => {
  const { describe, expect, it } = line.test
  const { AsyncClientCredentials, AsyncServiceClient, ConfigurationError } = line.facade
  const { Fixtures, MockHttpClient } = line.testing
  /** A stub `fetch` that records what it was sent and answers like the Service. */
  const stubFetch = () => {
    const sent: Array<{ method: string; url: string; authorization: string | null; body: string }> = []
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init)
      sent.push({
        method: request.method,
        url: request.url,
        authorization: request.headers.get("authorization"),
        body: await request.text()
      })
      const json = (body: unknown, status = 200) =>
        new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })
      const { pathname } = new URL(request.url)
      if (pathname === "/api/token") return json({ access_token: "stub-token", token_type: "Bearer", expires_in: 3600 })
      if (pathname.startsWith("/v1/albums/")) return json(Fixtures.album({ name: "Stubbed" }))
      return json({ error: { status: 404, message: "Not found" } }, 404)
    }
    return { fetch, sent }
  }

  describe("the fetch option", () => {
    it("sends the token request and the API request through it", async () => {
      const { fetch, sent } = stubFetch()
      await using client = new AsyncServiceClient({
        clientId: "my-app",
        clientSecret: "my-secret",
        authUrl: "https://accounts.test",
        apiUrl: "https://api.test/v1",
        fetch
      })
      const album = await client.albums.get("6akEvsycLGftJxYudPjmqK")
      expect(album.name).toBe("Stubbed")
      expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
        "POST https://accounts.test/api/token",
        "GET https://api.test/v1/albums/6akEvsycLGftJxYudPjmqK"
      ])
      expect(sent[0]!.body).toContain("grant_type=client_credentials")
      expect(sent[1]!.authorization).toBe("Bearer stub-token")
    })

    it("works for a provider alone", async () => {
      const { fetch, sent } = stubFetch()
      await using auth = new AsyncClientCredentials({
        clientId: "my-app",
        clientSecret: "my-secret",
        authUrl: "https://accounts.test",
        fetch
      })
      expect(await auth.getAccessToken()).toBe("stub-token")
      expect(sent).toHaveLength(1)
    })

    it("is checked by the constructor: a function, and not with httpClient", () => {
      expect(() => new AsyncServiceClient({ accessToken: "t", fetch: "nope" as never })).toThrow(ConfigurationError)
      expect(
        () =>
          new AsyncServiceClient({
            accessToken: "t",
            fetch: stubFetch().fetch,
            httpClient: MockHttpClient.layer(() => ({}))
          })
      ).toThrow(/fetch or httpClient, not both/)
    })
  })
}
