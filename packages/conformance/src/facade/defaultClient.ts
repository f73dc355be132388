/**
 * The Promise facade on the path users take: no HTTP client given (the line's default: undici on the Effect 3 line,
 * `fetch` on the Effect 4 line), the default skew, the emulator over real loopback HTTP.
 */
import type { EmulatorUnderTest, FacadeLine } from "./line.js"

/** The suite on one line; it returns the suite's emulator (started before the file's tests), for a line's own tests. */
export const defaultClient = (line: FacadeLine): (() => EmulatorUnderTest) => {
  const { afterAll, beforeAll, describe, expect, it } = line.test
  const { AsyncClientCredentials, AsyncServiceClient, AuthenticationError } = line.facade
  let emulator: EmulatorUnderTest

  beforeAll(async () => {
    emulator = await line.startEmulator()
  }, 60_000)

  afterAll(() => emulator?.close())

  describe("Promise facade on the default client", () => {
    it("AsyncClientCredentials: one token request for concurrent callers, then served from the cache", async () => {
      const provider = new AsyncClientCredentials({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl
      })
      try {
        const before = await emulator.clientCredentialsRequests()
        const tokens = await Promise.all(Array.from({ length: 20 }, () => provider.getAccessToken()))
        expect(new Set(tokens).size).toBe(1)
        expect(await provider.getAccessToken()).toBe(tokens[0])
        expect((await emulator.clientCredentialsRequests()) - before).toBe(1)
      } finally {
        await provider.close()
      }
    })

    it("AsyncServiceClient calls the API; a wrong secret rejects with AuthenticationError", async () => {
      const client = new AsyncServiceClient({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        apiUrl: emulator.apiUrl
      })
      try {
        const album = await client.albums.get("6akEvsycLGftJxYudPjmqK")
        expect(album.id).toBe("6akEvsycLGftJxYudPjmqK")
      } finally {
        await client.close()
      }
      const wrong = new AsyncClientCredentials({
        clientId: emulator.clientId,
        clientSecret: "not-the-secret",
        authUrl: emulator.authUrl
      })
      try {
        const error = await wrong.getAccessToken().then(
          () => undefined,
          (cause: unknown) => cause
        )
        expect(error).toBeInstanceOf(AuthenticationError)
        expect(String((error as Error).message)).not.toContain("not-the-secret")
      } finally {
        await wrong.close()
      }
    })
  })

  return () => emulator
}
