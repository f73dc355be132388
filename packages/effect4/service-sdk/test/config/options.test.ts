/** Option resolution (DESIGN section 4): explicit options, then SERVICE_SDK_* through Config, then defaults. */
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ClientCredentials, OAuthClient, ServiceClient } from "@service-sdk/effect"
import { issuing, mock, requests } from "../support/mock.js"

const env = (record: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnvRecord(record))

describe("options and the environment", () => {
  it.effect("credentials and URLs from SERVICE_SDK_* when the options are absent (empty strings count as absent)", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ clientId: "" })
      yield* oauth.clientCredentials()
      const [request] = yield* requests
      assert.strictEqual(request!.url.href, "https://env.example/api/token")
      assert.strictEqual(request!.headers.authorization, `Basic ${Buffer.from("env-id:env-secret").toString("base64")}`)
    }).pipe(
      Effect.provide(mock(issuing())),
      Effect.provide(
        env({
          SERVICE_SDK_CLIENT_ID: "env-id",
          SERVICE_SDK_CLIENT_SECRET: "env-secret",
          SERVICE_SDK_AUTH_URL: "https://env.example/"
        })
      )
    )
  )

  it.effect("explicit options win over the environment", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({
        clientId: "opt-id",
        clientSecret: "opt-secret",
        authUrl: "https://opt.example"
      })
      yield* oauth.clientCredentials()
      const [request] = yield* requests
      assert.strictEqual(request!.url.origin, "https://opt.example")
      assert.strictEqual(request!.headers.authorization, `Basic ${Buffer.from("opt-id:opt-secret").toString("base64")}`)
    }).pipe(
      Effect.provide(mock(issuing())),
      Effect.provide(env({ SERVICE_SDK_CLIENT_ID: "env-id", SERVICE_SDK_AUTH_URL: "https://env.example" }))
    )
  )

  it.effect("a missing credential is a ConfigurationError naming the option and the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(ClientCredentials.make({ clientId: "id" }))
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.include(error.message, "clientSecret")
      assert.include(error.message, "SERVICE_SDK_CLIENT_SECRET")
    }).pipe(Effect.provide(mock(issuing())), Effect.provide(env({})))
  )

  it.effect.each([
    [{ timeout: -1 }, "timeout"],
    [{ timeout: 0 }, "timeout"],
    [{ timeout: Number.NaN }, "timeout"],
    [{ maxRetries: 1.5 }, "maxRetries"],
    [{ skew: "-5 seconds" }, "skew"],
    [{ authUrl: "ftp://x" }, "authUrl"],
    [{ clientId: 42 }, "clientId"]
  ] as const)("bad option %j is a ConfigurationError naming %s, never clamped", ([options, name]) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        ClientCredentials.make({ clientId: "id", clientSecret: "s", ...(options as object) })
      )
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.include(error.message, name)
      assert.strictEqual((yield* requests).length, 0)
    }).pipe(Effect.provide(mock(issuing())), Effect.provide(env({})))
  )

  it.effect("ServiceClient.layerAccessToken refuses a token that is not visible ASCII", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(
          Effect.gen(function* () {
            return yield* ServiceClient
          }),
          ServiceClient.layerAccessToken(Redacted.make("bad token\n"))
        )
      )
      assert.strictEqual(error._tag, "ConfigurationError")
    }).pipe(Effect.provide(mock(issuing())), Effect.provide(env({})))
  )
})

describe("OAuthClient.resolveClient: the one option/environment fallback (as the Effect 3 line's)", () => {
  const fullEnv = {
    SERVICE_SDK_CLIENT_ID: "env-id",
    SERVICE_SDK_CLIENT_SECRET: "env-secret",
    SERVICE_SDK_AUTH_URL: "https://env.example/"
  }

  it.effect("explicit options win; empty options and variables count as absent; a public client reads no secret", () =>
    Effect.gen(function* () {
      const explicit = yield* OAuthClient.resolveClient({ clientId: " id ", clientSecret: "s", authUrl: "http://h/a/" })
      assert.deepStrictEqual([Option.getOrNull(explicit.clientId), explicit.authUrl], ["id", "http://h/a"])
      assert.strictEqual(Option.getOrNull(Option.map(explicit.clientSecret, Redacted.value)), "s")
      const fromEnv = yield* OAuthClient.resolveClient({ clientId: "", clientSecret: "  " })
      assert.deepStrictEqual([Option.getOrNull(fromEnv.clientId), fromEnv.authUrl], ["env-id", "https://env.example"])
      assert.strictEqual(Option.getOrNull(Option.map(fromEnv.clientSecret, Redacted.value)), "env-secret")
      const publicClient = yield* OAuthClient.resolveClient({ publicClient: true, clientSecret: "given" })
      assert.isTrue(Option.isNone(publicClient.clientSecret))
      const badUrl = yield* Effect.flip(OAuthClient.resolveClient({ authUrl: "ftp://h" }))
      assert.match(badUrl.message, /authUrl must be an http or https URL/)
    }).pipe(Effect.provide(env(fullEnv)))
  )

  it.effect("nothing set: no credentials, the Service's accounts service", () =>
    Effect.gen(function* () {
      const none = yield* OAuthClient.resolveClient()
      assert.deepStrictEqual(
        [Option.isNone(none.clientId), Option.isNone(none.clientSecret), none.authUrl],
        [true, true, "https://accounts.service.example"]
      )
    }).pipe(Effect.provide(env({ SERVICE_SDK_CLIENT_ID: " " })))
  )
})

describe("one rule for duration options: NaN (the number or the text) is refused the same as in the Effect 3 line", () => {
  it.effect.each([[Number.NaN], ["NaN"], ["NaN seconds"], [[Number.NaN, 0]]] as const)(
    "timeout %j: must be a positive duration, got …",
    ([nan]) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          ClientCredentials.make({ clientId: "id", clientSecret: "s", timeout: nan as never })
        )
        assert.match(error.message, /^timeout must be a positive duration, got /)
        const skew = yield* Effect.flip(
          ClientCredentials.make({ clientId: "id", clientSecret: "s", skew: nan as never })
        )
        assert.match(skew.message, /^skew must be zero or a positive duration, got /)
      }).pipe(Effect.provide(mock(issuing())), Effect.provide(env({})))
  )
})
