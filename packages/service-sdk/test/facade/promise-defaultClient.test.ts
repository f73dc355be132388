/**
 * The Promise facade on the path users take: no HTTP client given (the default undici one), the default skew, the
 * emulator over real loopback HTTP.
 */
import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { AuthenticationError } from "@service-sdk/effect"
import { AsyncClientCredentials, AsyncServiceClient } from "@service-sdk/effect/promise"

let emulator: EmulatorHandle

beforeAll(async () => {
  emulator = await Emulator.start()
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
      const before = (await emulator.stats()).tokenRequests.client_credentials
      const tokens = await Promise.all(Array.from({ length: 20 }, () => provider.getAccessToken()))
      expect(new Set(tokens).size).toBe(1)
      expect(await provider.getAccessToken()).toBe(tokens[0])
      expect((await emulator.stats()).tokenRequests.client_credentials - before).toBe(1)
    } finally {
      await provider.close()
    }
  })

  it("AsyncServiceClient.fromClientCredentials calls the API; a wrong secret rejects with AuthenticationError", async () => {
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
