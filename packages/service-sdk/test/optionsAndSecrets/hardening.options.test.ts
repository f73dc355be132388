/**
 * Issue 10, points 1 and 2: every constructor throws ConfigurationError synchronously for bad options, with the
 * default HTTP client as with a mock one, and bad values are named, never clamped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Layer, type Scope } from "effect"
import {
  AuthorizationCode,
  ClientCredentials,
  ServiceClient,
  TokenCache,
  TokenProvider,
  TokenStore
} from "@service-sdk/effect"
import {
  AsyncAuthorizationCode,
  AsyncClientCredentials,
  AsyncServiceClient,
  AsyncUserTokens,
  AuthenticationError,
  ConfigurationError
} from "@service-sdk/effect/promise"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { isolateEnv } from "../fixtures.js"

isolateEnv()

const AUTH_URL = "http://127.0.0.1:4010"
const credentials = { clientId: "client-id", clientSecret: "client-secret", authUrl: AUTH_URL }
const REDIRECT_URI = "http://127.0.0.1:4011/callback"

const thrownBy = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  return undefined
}

/** Runs a case with the default client (the path users take) and with a mock one. */
const clients = [
  { name: "default undici client", options: {} },
  { name: "mock httpClient", options: { httpClient: MockHttpClient.layer(() => MockHttpClient.json({})) } }
] as const

const expectConfigurationError = (error: unknown, mentions: RegExp) => {
  expect(error, "no throw").toBeDefined()
  expect(error?.constructor?.name).not.toBe("AsyncFiberException")
  expect(error).toBeInstanceOf(ConfigurationError)
  expect((error as ConfigurationError).message).toMatch(mentions)
}

const js = (value: unknown): any => value
const memoryStore = Effect.runSync(TokenStore.memory())

describe.each(clients)("Promise constructors with the $name", ({ options: client }) => {
  const cases: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
    ["AsyncServiceClient({}) without env", () => new AsyncServiceClient({ ...client }), /no credentials.*clientId/],
    [
      "two credential sources",
      () => new AsyncServiceClient({ ...client, accessToken: "t", clientId: "a", clientSecret: "b" }),
      /conflicting credentials/
    ],
    [
      "fromClientCredentials() without env",
      () => AsyncServiceClient.fromClientCredentials({ ...client }),
      /SERVICE_SDK_CLIENT_ID/
    ],
    [
      "bad apiUrl",
      () => new AsyncServiceClient({ ...client, accessToken: "t", apiUrl: "not a url" }),
      /apiUrl is not a valid URL/
    ],
    [
      "bad authUrl",
      () => new AsyncServiceClient({ ...client, ...credentials, authUrl: "ftp://x" }),
      /authUrl must be an http/
    ],
    [
      "timeout -1 (client)",
      () => new AsyncServiceClient({ ...client, accessToken: "t", timeout: -1 }),
      /timeout must be a positive duration/
    ],
    [
      "maxRetries 1.5",
      () => new AsyncServiceClient({ ...client, accessToken: "t", maxRetries: 1.5 }),
      /maxRetries must be a whole number/
    ],
    [
      "maxRetryAfter -1",
      () => new AsyncServiceClient({ ...client, accessToken: "t", maxRetryAfter: -1 }),
      /maxRetryAfter must be a positive duration/
    ],
    ["accessToken: 42", () => new AsyncServiceClient({ ...client, accessToken: js(42) }), /accessToken must be/],
    ["authProvider: {}", () => new AsyncServiceClient({ ...client, authProvider: js({}) }), /authProvider must be/],
    ["AsyncClientCredentials({})", () => new AsyncClientCredentials({ ...client }), /missing clientId/],
    [
      "timeout 0",
      () => new AsyncClientCredentials({ ...client, ...credentials, timeout: 0 }),
      /timeout must be a positive duration/
    ],
    [
      "timeout NaN",
      () => new AsyncClientCredentials({ ...client, ...credentials, timeout: Number.NaN }),
      /timeout must be a positive duration, got NaN/
    ],
    [
      'timeout "-1 seconds"',
      () => new AsyncClientCredentials({ ...client, ...credentials, timeout: "-1 seconds" }),
      /timeout must be a positive duration/
    ],
    [
      "skew -1",
      () => new AsyncClientCredentials({ ...client, ...credentials, skew: -1 }),
      /skew must be zero or a positive duration/
    ],
    [
      "refreshAhead 0",
      () => new AsyncClientCredentials({ ...client, ...credentials, refreshAhead: 0 }),
      /refreshAhead must be a positive duration/
    ],
    [
      "maxRetries -1",
      () => new AsyncClientCredentials({ ...client, ...credentials, maxRetries: -1 }),
      /maxRetries must be a whole number/
    ],
    [
      'maxRetries "3"',
      () => new AsyncClientCredentials({ ...client, ...credentials, maxRetries: js("3") }),
      /maxRetries must be a whole number/
    ],
    [
      "clientId: 123",
      () => new AsyncClientCredentials({ ...client, ...credentials, clientId: js(123) }),
      /clientId must be a string, got 123/
    ],
    [
      "scope: 42",
      () => new AsyncClientCredentials({ ...client, ...credentials, scope: js(42) }),
      /scope must be a string or a list of strings/
    ],
    [
      "AsyncAuthorizationCode bad redirectUri",
      () => new AsyncAuthorizationCode({ ...client, ...credentials, redirectUri: "::" }),
      /redirectUri is not a valid URL/
    ],
    [
      "AsyncAuthorizationCode redirectUri: 5",
      () => new AsyncAuthorizationCode({ ...client, ...credentials, redirectUri: js(5) }),
      /redirectUri must be a string/
    ],
    ["AsyncAuthorizationCode({})", () => new AsyncAuthorizationCode({ ...client }), /missing clientId/],
    [
      "AsyncUserTokens without a store",
      () => new AsyncUserTokens({ ...client, ...credentials, store: js(undefined) }),
      /store must be a TokenStore/
    ],
    [
      "AsyncUserTokens idleTimeToLive -5",
      () => new AsyncUserTokens({ ...client, ...credentials, store: memoryStore, idleTimeToLive: -5 }),
      /idleTimeToLive must be a positive duration/
    ],
    [
      "AsyncUserTokens clientId: 123",
      () => new AsyncUserTokens({ ...client, ...credentials, store: memoryStore, clientId: js(123) }),
      /clientId must be a string, got 123/
    ]
  ]
  for (const [name, construct, mentions] of cases) {
    it(`${name}: ConfigurationError, thrown synchronously`, () => {
      expectConfigurationError(thrownBy(construct), mentions)
    })
  }

  it("skew: 0 is meaningful and accepted", async () => {
    await using provider = new AsyncClientCredentials({ ...client, ...credentials, skew: 0 })
    expect(provider).toBeInstanceOf(AsyncClientCredentials)
  })

  it("exchangeCode(undefined) rejects with ConfigurationError; parseResponseUrl(42) throws AuthenticationError", async () => {
    await using provider = new AsyncAuthorizationCode({ ...client, ...credentials, redirectUri: REDIRECT_URI })
    await expect(provider.exchangeCode(js(undefined))).rejects.toBeInstanceOf(ConfigurationError)
    const error = thrownBy(() => AsyncAuthorizationCode.parseResponseUrl(js(42)))
    expect(error).toBeInstanceOf(AuthenticationError)
  })

  it("authorizeLocal timeout -1: ConfigurationError naming it, no instant timeout", async () => {
    await using provider = new AsyncAuthorizationCode({ ...client, ...credentials, redirectUri: REDIRECT_URI })
    const error = await provider.authorizeLocal({ timeout: -1, openBrowser: false, onAuthorizationUrl: () => {} }).then(
      () => undefined,
      (error: unknown) => error
    )
    expectConfigurationError(error, /timeout must be a positive duration/)
  })
})

describe("Effect constructors reject the same values", () => {
  const http = MockHttpClient.layer(() => MockHttpClient.json({}))
  const failure = <E>(effect: Effect.Effect<unknown, E, Scope.Scope>) =>
    Effect.runSync(Effect.flip(Effect.scoped(effect)))

  it("ClientCredentials, AuthorizationCode and ServiceClient name the option", () => {
    const cc = (options: ClientCredentials.Options) =>
      failure(ClientCredentials.make({ ...credentials, ...options }).pipe(Effect.provide(http)))
    expect(cc({ timeout: -5 }).message).toMatch(/^timeout must be a positive duration, got -5/)
    expect(cc({ skew: Number.NaN }).message).toMatch(/^skew must be/)
    expect(cc({ refreshAhead: [-1, 0] }).message).toMatch(/^refreshAhead must be/)
    expect(cc({ clientSecret: js(7) }).message).toMatch(/^clientSecret must be/)
    const ac = failure(AuthorizationCode.make({ ...credentials, refreshToken: js({}) }).pipe(Effect.provide(http)))
    expect(ac.message).toMatch(/^refreshToken must be/)
    // the layers fail with it too, in their error channel
    const sc = failure(
      Layer.build(ServiceClient.layerAccessToken("t", { maxRetryAfter: 0 })).pipe(Effect.provide(http))
    )
    expect(sc).toBeInstanceOf(ConfigurationError)
    expect((sc as ConfigurationError).message).toMatch(/^maxRetryAfter must be a positive duration/)
  })
})

describe("a given access token must be visible ASCII (RFC 6750 §2.1)", () => {
  const http = MockHttpClient.layer(() => MockHttpClient.json({}))
  const bad = ["a\r\nX: 1", "tok\u001b]0;title\u0007", "two words", "tök", "\u202Etok", " "]

  it("ServiceClient.layerAccessToken stops with ConfigurationError (its error channel is never), without a request", () => {
    for (const token of bad) {
      const error = Effect.runSync(
        Layer.build(ServiceClient.layerAccessToken(token)).pipe(
          Effect.scoped,
          Effect.provide(http),
          Effect.sandbox,
          Effect.flip,
          Effect.map(Cause.squash)
        )
      ) as ConfigurationError
      expectConfigurationError(error, /access token/)
      expect(error.message).not.toContain(token.trim() === "" ? "\u0000" : token)
    }
    // a JWT and RFC 6750 b64token characters are fine
    const ok = Effect.runSync(
      Layer.build(ServiceClient.layerAccessToken("eyJh.eyJz.c2ln-_~+/==")).pipe(
        Effect.scoped,
        Effect.provide(http),
        Effect.either
      )
    )
    expect(ok._tag).toBe("Right")
  })

  it("TokenProvider.static throws ConfigurationError at once", () => {
    for (const token of bad) {
      expectConfigurationError(
        thrownBy(() => TokenProvider.static(token)),
        /visible ASCII/
      )
    }
    expect(thrownBy(() => TokenProvider.static("eyJh.eyJz.c2ln-_~+/=="))).toBeUndefined()
  })

  for (const { name, options } of clients) {
    it(`new AsyncServiceClient({ accessToken }) throws ConfigurationError (${name}), never a slow TransportError`, () => {
      // (a blank accessToken counts as absent in the facade: "no credentials")
      for (const token of bad.filter((token) => token.trim() !== "")) {
        expectConfigurationError(
          thrownBy(() => new AsyncServiceClient({ ...options, accessToken: token, apiUrl: "http://127.0.0.1:1/v1" })),
          /access token/
        )
      }
    })
  }
})

describe("one rule for duration options: NaN (the number or the text) is refused the same everywhere", () => {
  const nans = [Number.NaN, "NaN", "NaN seconds", [Number.NaN, 0]] as const
  const messageOf = <E extends { readonly message: string }>(effect: Effect.Effect<unknown, E, Scope.Scope>) =>
    Effect.runSync(Effect.flip(Effect.scoped(effect))).message

  it("providers, clients, the file cache and caches of your own (TokenCache.durationOption)", () => {
    const http = MockHttpClient.layer(() => MockHttpClient.json({}))
    for (const nan of nans) {
      const value = nan as never
      expect(messageOf(ClientCredentials.make({ ...credentials, timeout: value }).pipe(Effect.provide(http)))).toMatch(
        /^timeout must be a positive duration, got /
      )
      expect(messageOf(ClientCredentials.make({ ...credentials, skew: value }).pipe(Effect.provide(http)))).toMatch(
        /^skew must be zero or a positive duration, got /
      )
      expect(
        messageOf(Layer.build(ServiceClient.layerAccessToken("t", { maxRetryAfter: value })).pipe(Effect.provide(http)))
      ).toMatch(/^maxRetryAfter must be a positive duration, got /)
      expect(messageOf(TokenCache.fileLockOptions({ lockTtl: value }))).toMatch(
        /^lockTtl must be a duration from 1 ms to 2147483647 ms, got /
      )
      expect(messageOf(TokenCache.durationOption(value, { option: "pollInterval", fallback: "1 second" }))).toMatch(
        /^pollInterval must be a positive duration, got /
      )
    }
  })
})
