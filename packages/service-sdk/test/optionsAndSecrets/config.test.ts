import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import {
  AuthorizationCode,
  ClientCredentials,
  ConfigurationError,
  OAuthClient,
  TokenProvider
} from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { normalizeScope } from "../../src/internal/config.js"
import { numberedTokens, requests } from "../fixtures.js"

const env = (entries: Readonly<Record<string, string>>) => ConfigProvider.fromMap(new Map(Object.entries(entries)))

const fullEnv = {
  SERVICE_SDK_CLIENT_ID: "env-id",
  SERVICE_SDK_CLIENT_SECRET: "env-secret",
  SERVICE_SDK_REDIRECT_URI: "http://127.0.0.1:9999/env-callback",
  SERVICE_SDK_AUTH_URL: "http://127.0.0.1:7001/env-accounts"
}

/** The client id and secret of a Basic Authorization header (hex-free test values need no form decoding). */
const basicCredentials = (header: string | undefined) =>
  Buffer.from((header ?? "").replace(/^Basic /, ""), "base64").toString("utf8")

/** Builds a client-credentials provider under `entries` as the environment, fetches one token, returns the request. */
const firstTokenRequest = (options: ClientCredentials.Options, entries: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    yield* (yield* TokenProvider).getAccessToken
    const [request] = yield* requests
    return request!
  }).pipe(
    Effect.provide(ClientCredentials.layer(options).pipe(Layer.provideMerge(MockHttpClient.layer(numberedTokens())))),
    Effect.withConfigProvider(env(entries))
  )

const configurationError = (options: ClientCredentials.Options, entries: Readonly<Record<string, string>>) =>
  ClientCredentials.make(options).pipe(
    Effect.flip,
    Effect.scoped,
    Effect.provide(MockHttpClient.layer(numberedTokens())),
    Effect.withConfigProvider(env(entries))
  )

describe("configuration", () => {
  it.effect("client id, secret and authUrl come from the environment", () =>
    Effect.gen(function* () {
      const request = yield* firstTokenRequest({}, fullEnv)
      expect(request.url.href).toBe("http://127.0.0.1:7001/env-accounts/api/token")
      expect(basicCredentials(request.headers.authorization)).toBe("env-id:env-secret")
    })
  )

  it.effect("explicit options win over the environment", () =>
    Effect.gen(function* () {
      const request = yield* firstTokenRequest(
        { clientId: "opt-id", clientSecret: Redacted.make("opt-secret"), authUrl: "http://127.0.0.1:7002" },
        fullEnv
      )
      expect(request.url.href).toBe("http://127.0.0.1:7002/api/token")
      expect(basicCredentials(request.headers.authorization)).toBe("opt-id:opt-secret")
    })
  )

  it.effect("empty options count as absent and fall back to the environment", () =>
    Effect.gen(function* () {
      const request = yield* firstTokenRequest({ clientId: "", clientSecret: Redacted.make(""), authUrl: "" }, fullEnv)
      expect(request.url.href).toBe("http://127.0.0.1:7001/env-accounts/api/token")
      expect(basicCredentials(request.headers.authorization)).toBe("env-id:env-secret")
    })
  )

  it.effect("authUrl defaults to https://accounts.service.example and loses a trailing slash", () =>
    Effect.gen(function* () {
      const byDefault = yield* firstTokenRequest({ clientId: "i", clientSecret: "s" }, {})
      expect(byDefault.url.href).toBe("https://accounts.service.example/api/token")
      const slashed = yield* firstTokenRequest(
        { clientId: "i", clientSecret: "s", authUrl: "http://127.0.0.1:7003/x/" },
        {}
      )
      expect(slashed.url.href).toBe("http://127.0.0.1:7003/x/api/token")
    })
  )

  it.effect.each([
    ["clientId", "SERVICE_SDK_CLIENT_ID", { SERVICE_SDK_CLIENT_SECRET: "s" }],
    ["clientSecret", "SERVICE_SDK_CLIENT_SECRET", { SERVICE_SDK_CLIENT_ID: "i" }],
    ["clientId", "SERVICE_SDK_CLIENT_ID", { SERVICE_SDK_CLIENT_ID: "", SERVICE_SDK_CLIENT_SECRET: "s" }],
    ["clientSecret", "SERVICE_SDK_CLIENT_SECRET", { SERVICE_SDK_CLIENT_ID: "i", SERVICE_SDK_CLIENT_SECRET: "  " }]
  ] as const)("a missing %s is a ConfigurationError naming the option and %s", ([option, variable, entries]) =>
    Effect.gen(function* () {
      const error = yield* configurationError({}, entries)
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toContain(option)
      expect(error.message).toContain(variable)
    })
  )

  it.effect.each([
    ["not a url", "not a URL"],
    ["ftp://127.0.0.1/x", "ftp"],
    ["http://127.0.0.1:7000/?q=1", "query"],
    ["http://user:pw@127.0.0.1:7000", "credentials"]
  ] as const)("authUrl %s is a ConfigurationError", ([authUrl]) =>
    Effect.gen(function* () {
      const explicit = yield* configurationError({ clientId: "i", clientSecret: "s", authUrl }, {})
      expect(explicit._tag).toBe("ConfigurationError")
      expect(explicit.message).toContain("authUrl")
      expect(explicit.message).not.toContain("pw@")
      const fromEnv = yield* configurationError({ clientId: "i", clientSecret: "s" }, { SERVICE_SDK_AUTH_URL: authUrl })
      expect(fromEnv._tag).toBe("ConfigurationError")
    })
  )

  it.scoped("invalid timeout, maxRetries and skew are ConfigurationErrors", () =>
    Effect.gen(function* () {
      const base = { clientId: "i", clientSecret: "s" }
      for (const options of [
        { ...base, maxRetries: -1 },
        { ...base, maxRetries: 1.5 },
        { ...base, timeout: "soon" as never },
        { ...base, skew: Number.POSITIVE_INFINITY }
      ]) {
        const error = yield* configurationError(options, {})
        expect(error._tag).toBe("ConfigurationError")
      }
    })
  )

  it.effect("the redirect URI comes from SERVICE_SDK_REDIRECT_URI unless given", () =>
    Effect.gen(function* () {
      const urlWith = (options: AuthorizationCode.Options) =>
        Effect.map(AuthorizationCode, (provider) => new URL(provider.getAuthorizationUrl())).pipe(
          Effect.provide(AuthorizationCode.layer(options).pipe(Layer.provide(MockHttpClient.layer(numberedTokens())))),
          Effect.withConfigProvider(env(fullEnv))
        )
      const fromEnv = yield* urlWith({})
      expect(fromEnv.origin + fromEnv.pathname).toBe("http://127.0.0.1:7001/env-accounts/authorize")
      expect(fromEnv.searchParams.get("client_id")).toBe("env-id")
      expect(fromEnv.searchParams.get("redirect_uri")).toBe("http://127.0.0.1:9999/env-callback")
      const explicit = yield* urlWith({ redirectUri: "http://127.0.0.1:1234/cb", clientId: "opt-id" })
      expect(explicit.searchParams.get("redirect_uri")).toBe("http://127.0.0.1:1234/cb")
      expect(explicit.searchParams.get("client_id")).toBe("opt-id")
      const empty = yield* urlWith({ redirectUri: "" })
      expect(empty.searchParams.get("redirect_uri")).toBe("http://127.0.0.1:9999/env-callback")
    })
  )

  it.scoped("an invalid redirectUri is a ConfigurationError", () =>
    Effect.gen(function* () {
      const error = yield* AuthorizationCode.make({ clientId: "i", clientSecret: "s", redirectUri: "::nope" }).pipe(
        Effect.flip,
        Effect.provide(MockHttpClient.layer(numberedTokens())),
        Effect.withConfigProvider(env({}))
      )
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toContain("redirectUri")
    })
  )
})

describe("normalizeScope", () => {
  it("joins a list with single spaces", () => {
    expect(normalizeScope(["user-read-private", "user-read-email"])).toBe("user-read-private user-read-email")
  })

  it("normalises commas and whitespace runs in a string", () => {
    expect(normalizeScope("a,b  c,\t d\n,e")).toBe("a b c d e")
    expect(normalizeScope("  a  ")).toBe("a")
    expect(normalizeScope(["a, b", " c "])).toBe("a b c")
  })

  it("an empty scope is omitted", () => {
    expect(normalizeScope(undefined)).toBeUndefined()
    expect(normalizeScope("")).toBeUndefined()
    expect(normalizeScope(" , ,\t")).toBeUndefined()
    expect(normalizeScope([])).toBeUndefined()
    expect(normalizeScope(["", " "])).toBeUndefined()
  })
})

describe("OAuthClient.resolveClient: the one option/environment fallback, for tools that word their own messages", () => {
  const resolve = (options: Parameters<typeof OAuthClient.resolveClient>[0], entries: Record<string, string>) =>
    OAuthClient.resolveClient(options).pipe(Effect.withConfigProvider(env(entries)))

  it.effect("explicit options win; empty options and empty variables count as absent; values are trimmed", () =>
    Effect.gen(function* () {
      const explicit = yield* resolve(
        { clientId: " id ", clientSecret: Redacted.make("s"), authUrl: "http://h/a/" },
        fullEnv
      )
      expect([Option.getOrNull(explicit.clientId), explicit.authUrl]).toEqual(["id", "http://h/a"])
      expect(Option.map(explicit.clientSecret, Redacted.value)).toEqual(Option.some("s"))
      const fromEnv = yield* resolve({ clientId: "", clientSecret: "  " }, fullEnv)
      expect([Option.getOrNull(fromEnv.clientId), fromEnv.authUrl]).toEqual(["env-id", fullEnv.SERVICE_SDK_AUTH_URL])
      expect(Option.map(fromEnv.clientSecret, Redacted.value)).toEqual(Option.some("env-secret"))
      const none = yield* resolve({}, { SERVICE_SDK_CLIENT_ID: " ", SERVICE_SDK_CLIENT_SECRET: "" })
      expect([none.clientId, none.clientSecret, none.authUrl]).toEqual([
        Option.none(),
        Option.none(),
        "https://accounts.service.example"
      ])
    })
  )

  it.effect("a public client's secret is neither read from the environment nor returned", () =>
    Effect.gen(function* () {
      const resolved = yield* resolve({ publicClient: true, clientSecret: "given" }, fullEnv)
      expect([Option.getOrNull(resolved.clientId), resolved.clientSecret]).toEqual(["env-id", Option.none()])
    })
  )

  it.effect("a bad option is the ConfigurationError make would fail with", () =>
    Effect.gen(function* () {
      const badUrl = yield* Effect.flip(resolve({ authUrl: "ftp://h" }, {}))
      expect(badUrl).toBeInstanceOf(ConfigurationError)
      expect(badUrl.message).toMatch(/authUrl must be an http or https URL/)
      const badId = yield* Effect.flip(resolve({ clientId: 5 as unknown as string }, {}))
      expect(badId.message).toMatch(/clientId must be a string/)
    })
  )
})
