/**
 * The Promise facade on the path users take: no HTTP client given (the default: `fetch`), the default skew, the
 * emulator over real loopback HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { AuthenticationError } from "@service-sdk/effect"
import { AsyncClientCredentials, AsyncServiceClient } from "@service-sdk/effect/promise"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"

let emulator: RunningEmulator

beforeAll(async () => {
  emulator = await startEmulator()
}, 60_000)

afterAll(() => emulator?.stop())

describe("Promise facade on the default client", () => {
  it("AsyncClientCredentials: one token request for concurrent callers, then served from the cache", async () => {
    const provider = new AsyncClientCredentials({
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl
    })
    try {
      const before = (await emulator.stats()).tokenRequests.client_credentials ?? 0
      const tokens = await Promise.all(Array.from({ length: 20 }, () => provider.getAccessToken()))
      expect(new Set(tokens).size).toBe(1)
      expect(await provider.getAccessToken()).toBe(tokens[0])
      expect(((await emulator.stats()).tokenRequests.client_credentials ?? 0) - before).toBe(1)
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

  it("a rejection's stack shows the caller's own frame (42.15)", async () => {
    const wrong = new AsyncClientCredentials({
      clientId: emulator.clientId,
      clientSecret: "not-the-secret",
      authUrl: emulator.authUrl
    })
    try {
      const myOwnCallSite = () => wrong.getAccessToken()
      const error = await myOwnCallSite().catch((cause: unknown) => cause)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(String((error as Error).stack)).toContain("myOwnCallSite")
    } finally {
      await wrong.close()
    }
  })
})
