/** The Effect 4 line against the emulator (an Effect 3 app) over real loopback HTTP, with FetchHttpClient. */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import {
  AuthorizationCode,
  ClientCredentials,
  OAuthClient,
  ServiceClient,
  TokenStore,
  UserTokens
} from "@service-sdk/effect"
import { type RunningEmulator, startEmulator } from "../support/emulator.js"

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator?.stop()
})

const options = () => ({
  clientId: emulator.clientId,
  clientSecret: emulator.clientSecret,
  authUrl: emulator.authUrl
})

describe("against the emulator over loopback", () => {
  it.live("client credentials: concurrent callers share one token request; albums.get decodes", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() => emulator.control("reset", {}))
      const client = yield* ServiceClient
      const albums = yield* Effect.all(
        Array.from({ length: 20 }, () => client.albums.get("6akEvsycLGftJxYudPjmqK")),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(albums[0]!.id, "6akEvsycLGftJxYudPjmqK")
      const stats = yield* Effect.promise(() => emulator.stats())
      assert.strictEqual(stats.tokenRequests.client_credentials, 1)
      assert.strictEqual(stats.apiRequests.total, 20)
    }).pipe(
      Effect.provide(
        Effect.suspend(() =>
          Effect.succeed(
            ServiceClient.layerClientCredentials({ ...options(), apiUrl: emulator.apiUrl }).pipe(
              Layer.provide(FetchHttpClient.layer)
            )
          )
        ).pipe(Layer.unwrap)
      )
    )
  )

  it.live("a wrong secret is an AuthenticationError that does not contain the secret", () =>
    Effect.gen(function* () {
      const provider = yield* ClientCredentials.make({ ...options(), clientSecret: "wrong-secret-canary-42" })
      const error = yield* Effect.flip(provider.getAccessToken)
      assert.strictEqual(error._tag, "AuthenticationError")
      assert.notInclude(`${error.message} ${JSON.stringify(error)} ${String(error)}`, "wrong-secret-canary-42")
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

  it.live("sign-in with PKCE, then the user's profile; a 401 (revoked token) forces one refresh", () =>
    Effect.gen(function* () {
      const redirectUri = "http://127.0.0.1:9/callback"
      const provider = yield* AuthorizationCode.make({ ...options(), redirectUri })
      const pending = yield* provider.beginAuthorization({ scope: "user-read-private", loginHint: "ada" })
      const consent = yield* Effect.promise(() => fetch(pending.url, { redirect: "manual" }))
      const callback = consent.headers.get("location")!
      const token = yield* provider.completeAuthorization(callback, pending)
      // a second completion of the same sign-in is refused
      const again = yield* Effect.flip(provider.completeAuthorization(callback, pending))
      assert.strictEqual(again._tag, "AuthenticationError")
      const client = yield* ServiceClient.makeWith(provider, { apiUrl: emulator.apiUrl })
      assert.strictEqual((yield* client.users.me).id, "ada")
      yield* Effect.promise(() => emulator.control("revoke", { token: Redacted.value(token.accessToken) }))
      assert.strictEqual((yield* client.users.me).id, "ada")
      const stats = yield* Effect.promise(() => emulator.stats())
      assert.isAtLeast(stats.tokenRequests.refresh_token!, 1)
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

  it.live("a public client signs in with PKCE and no secret (client_id in the body); its token refreshes", () =>
    Effect.gen(function* () {
      const provider = yield* AuthorizationCode.make({
        clientId: "emulator-public-client",
        publicClient: true,
        authUrl: emulator.authUrl,
        redirectUri: "http://127.0.0.1:9/callback"
      })
      const pending = yield* provider.beginAuthorization({ scope: "user-read-private", loginHint: "pat" })
      const consent = yield* Effect.promise(() => fetch(pending.url, { redirect: "manual" }))
      const token = yield* provider.completeAuthorization(consent.headers.get("location")!, pending)
      const first = yield* provider.getAccessToken
      assert.strictEqual(Redacted.value(first), Redacted.value(token.accessToken))
      const refreshed = yield* provider.forceRefresh(first)
      assert.notStrictEqual(Redacted.value(refreshed), Redacted.value(first))
      const client = yield* ServiceClient.makeWith(provider, { apiUrl: emulator.apiUrl })
      assert.strictEqual((yield* client.users.me).id, "pat")
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

  it.live("a state mismatch is refused before any token request", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ ...options(), redirectUri: "http://127.0.0.1:9/cb" })
      const pending = yield* oauth.beginAuthorization()
      const error = yield* Effect.flip(oauth.completeAuthorization("?code=x&state=forged", pending))
      assert.match(error.message, /state mismatch/)
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

  it.live("many users: each user's client sees only their own profile", () =>
    Effect.gen(function* () {
      const users = yield* UserTokens
      const oauth = yield* OAuthClient.make({ ...options(), redirectUri: "http://127.0.0.1:9/callback" })
      for (const id of ["alice", "bob"]) {
        const pending = yield* oauth.beginAuthorization({ loginHint: id, scope: "user-read-private" })
        const consent = yield* Effect.promise(() => fetch(pending.url, { redirect: "manual" }))
        yield* users.signIn(id, yield* oauth.completeAuthorization(consent.headers.get("location")!, pending))
      }
      const [alice, bob] = yield* Effect.all(
        ["alice", "bob"].map((id) => Effect.flatMap(ServiceClient.forUser(id), (client) => client.users.me)),
        { concurrency: 2 }
      )
      assert.deepStrictEqual([alice!.id, bob!.id], ["alice", "bob"])
      yield* users.signOut("alice")
      const gone = yield* Effect.flip(users.provider("alice").getAccessToken)
      assert.strictEqual(gone._tag, "AuthenticationError")
    }).pipe(
      Effect.provide(
        Layer.unwrap(
          Effect.sync(() =>
            Layer.mergeAll(
              ServiceClient.layerAccessToken("unused", { apiUrl: emulator.apiUrl }),
              Layer.unwrap(Effect.map(TokenStore.memory(), (store) => UserTokens.layer({ ...options(), store })))
            ).pipe(Layer.provideMerge(FetchHttpClient.layer))
          )
        )
      )
    )
  )
})
