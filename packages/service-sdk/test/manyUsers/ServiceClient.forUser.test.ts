import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, pipe, Redacted } from "effect"
import { ServiceClient, TokenProvider, TokenStore, UserTokens } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, tokenInfo, tokenResponse } from "../fixtures.js"
import { API_URL, expired, ok } from "../ServiceClient.helpers.js"

/** The token endpoint answers `<refresh token>:renewed`; `/v1/me` answers the user the bearer names, 401 for `rejected`. */
const handler =
  (rejected: ReadonlySet<string>): MockHandler =>
  (request) => {
    if (request.url.pathname === "/api/token") return tokenResponse(`${request.form.get("refresh_token")}:renewed`)
    const bearer = (request.headers.authorization ?? "").replace(/^Bearer /, "")
    if (rejected.has(bearer)) return expired
    return ok({ id: bearer.split("-")[0], display_name: bearer })
  }

const setup = (rejected: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const store = yield* TokenStore.memory()
    const context = yield* Layer.build(
      Layer.mergeAll(
        UserTokens.layer({ ...credentials, store }),
        ServiceClient.layer({ apiUrl: API_URL }).pipe(Layer.provide(TokenProvider.layerStatic("no-user")))
      ).pipe(Layer.provideMerge(MockHttpClient.layer(handler(rejected))))
    )
    const users = Context.get(context, UserTokens)
    const mock = Context.get(context, MockHttpClient)
    const forUser = (userId: string) => ServiceClient.forUser(userId).pipe(Effect.provide(context))
    return { users, forUser, requests: mock.requests }
  })

describe("ServiceClient.forUser", () => {
  it.scoped("each user's requests carry that user's bearer", () =>
    Effect.gen(function* () {
      const { forUser, requests, users } = yield* setup(new Set())
      yield* users.signIn("alice", tokenInfo("alice-token", 3600, { refreshToken: "alice-refresh" }))
      yield* users.signIn("bob", tokenInfo("bob-token", 3600, { refreshToken: "bob-refresh" }))
      const alice = yield* forUser("alice")
      const bob = yield* forUser("bob")
      const answers = yield* Effect.all([alice.users.me, bob.users.me, alice.users.me, bob.users.me], {
        concurrency: "unbounded"
      })
      expect(answers.map((user) => user.id)).toEqual(["alice", "bob", "alice", "bob"])
      const bearers = (yield* requests).map((request) => request.headers.authorization)
      expect(bearers.sort()).toEqual([
        "Bearer alice-token",
        "Bearer alice-token",
        "Bearer bob-token",
        "Bearer bob-token"
      ])
    })
  )

  it.scoped("a 401 forces a refresh of that user's token only, then one retry", () =>
    Effect.gen(function* () {
      const { forUser, requests, users } = yield* setup(new Set(["alice-token"]))
      yield* users.signIn("alice", tokenInfo("alice-token", 3600, { refreshToken: "alice-refresh" }))
      yield* users.signIn("bob", tokenInfo("bob-token", 3600, { refreshToken: "bob-refresh" }))
      const me = yield* Effect.flatMap(forUser("alice"), (client) => client.users.me)
      expect(me.display_name).toBe("alice-refresh:renewed")
      expect((yield* Effect.flatMap(forUser("bob"), (client) => client.users.me)).id).toBe("bob")
      const sent = yield* requests
      const refreshes = sent.filter((request) => request.url.pathname === "/api/token")
      expect(refreshes.map((request) => request.form.get("refresh_token"))).toEqual(["alice-refresh"])
      expect(Redacted.value(yield* users.provider("bob").getAccessToken)).toBe("bob-token")
    })
  )

  it.scoped("a user who is not signed in gets AuthenticationError from the client, with no API request", () =>
    Effect.gen(function* () {
      const { forUser, requests } = yield* setup(new Set())
      const error = yield* Effect.flip(Effect.flatMap(forUser("carol"), (client) => client.users.me))
      expect(error._tag).toBe("AuthenticationError")
      expect(error.message).toContain("not signed in")
      expect((yield* requests).length).toBe(0)
    })
  )

  it.scoped("works for a hand-made client that declares withTokenProvider (a spread copy keeps it)", () =>
    Effect.gen(function* () {
      const { users, requests } = yield* setup(new Set())
      yield* users.signIn("alice", tokenInfo("alice-token", 3600, { refreshToken: "alice-refresh" }))
      const base = yield* ServiceClient.makeWith(TokenProvider.static("no-user"), { apiUrl: API_URL }).pipe(
        Effect.provide(MockHttpClient.layer(handler(new Set())))
      )
      // a user's own wrapper of a client, as plain objects are spread
      const wrapped: ServiceClient.Service = { ...base }
      const alice = yield* ServiceClient.forUser("alice").pipe(
        Effect.provideService(ServiceClient, wrapped),
        Effect.provideService(UserTokens, users)
      )
      expect((yield* alice.users.me).id).toBe("alice")
      expect((yield* requests).length).toBe(0) // the wrapper's own HttpClient carried the request
      // the pipeable combinator is the same step
      const piped = pipe(wrapped, ServiceClient.withTokenProvider(users.provider("alice")))
      expect((yield* piped.users.me).id).toBe("alice")
    })
  )
})

describe("ServiceClient.makeWith", () => {
  it.effect("a client on the given provider, no TokenProvider in context; bad options and providers fail", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient.makeWith(TokenProvider.static("bob-token"), { apiUrl: API_URL })
      expect((yield* client.users.me).id).toBe("bob")
      const badOption = yield* Effect.flip(ServiceClient.makeWith(TokenProvider.static("t"), { timeout: 0 }))
      expect(badOption._tag).toBe("ConfigurationError")
      const badProvider = yield* Effect.flip(ServiceClient.makeWith({} as TokenProvider.Service))
      expect(badProvider._tag).toBe("ConfigurationError")
    }).pipe(Effect.provide(MockHttpClient.layer(handler(new Set()))))
  )
})
