/**
 * `AsyncUserTokens` as plain code uses it: the default HTTP client (undici, no `httpClient` option), the default
 * skew, a Promise store, and `AsyncServiceClient` per user, against the emulator over loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { TokenInfo } from "@service-sdk/effect"
import {
  AsyncServiceClient,
  AsyncUserTokens,
  AuthenticationError,
  type PromiseUserTokenCache
} from "@service-sdk/effect/promise"
import { Emulator, type EmulatorHandle } from "../../src/internal/effectApi.js"

/** A plain Promise store: one Map entry per user (`clear` is what `signOut` calls). */
const mapStore = () => {
  const entries = new Map<string, TokenInfo>()
  return (userId: string): PromiseUserTokenCache => ({
    get: async () => entries.get(userId),
    set: async (token) => {
      entries.set(userId, token)
    },
    clear: async () => {
      entries.delete(userId)
    }
  })
}

describe("AsyncUserTokens on the default HTTP client", () => {
  let emulator: EmulatorHandle
  beforeAll(async () => {
    emulator = await Emulator.start()
  })
  afterAll(async () => {
    await emulator?.close()
  })

  /** Signs `userId` in at the emulator with a token that lives `expiresIn` seconds; hands it to `users`. */
  const signIn = async (users: AsyncUserTokens, userId: string, expiresIn: number) => {
    const tokens = await emulator.signIn({ userId, expiresIn })
    const now = Effect.runSync(Clock.currentTimeMillis)
    await users.signIn(
      userId,
      new TokenInfo({
        accessToken: Redacted.make(tokens.access_token),
        refreshToken: Redacted.make(tokens.refresh_token),
        expiresAt: now / 1000 + tokens.expires_in,
        issuedAt: now / 1000,
        scope: tokens.scope
      })
    )
  }

  it("each user's client calls with that user's bearer, short-lived tokens are refreshed per user, signOut is per user", async () => {
    await using users = new AsyncUserTokens({
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: emulator.authUrl,
      store: mapStore()
    })
    await signIn(users, "alice", 2)
    await signIn(users, "bob", 2)
    await using alice = new AsyncServiceClient({ authProvider: users.forUser("alice"), apiUrl: emulator.apiUrl })
    await using bob = new AsyncServiceClient({ authProvider: users.forUser("bob"), apiUrl: emulator.apiUrl })
    const before = (await emulator.stats()).tokenRequests.refresh_token
    const fresh = await Promise.all([alice.users.me(), bob.users.me()])
    expect(fresh.map((user) => user.id)).toEqual(["alice", "bob"])
    expect((await emulator.stats()).tokenRequests.refresh_token - before).toBe(0)

    // 2 s tokens are shorter than the default 30 s skew: stale half-way (1 s), so now each user refreshes once
    await new Promise((resolve) => setTimeout(resolve, 1200))
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => alice.users.me()),
      ...Array.from({ length: 5 }, () => bob.users.me())
    ])
    expect(answers.map((user) => user.id)).toEqual([...Array(5).fill("alice"), ...Array(5).fill("bob")])
    expect((await emulator.stats()).tokenRequests.refresh_token - before).toBe(2)

    await users.signOut("alice")
    await expect(alice.users.me()).rejects.toBeInstanceOf(AuthenticationError)
    expect((await bob.users.me()).id).toBe("bob")
  })
})
