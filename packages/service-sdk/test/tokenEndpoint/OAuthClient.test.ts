/**
 * OAuthClient: the protocol steps, stateless, against the mock HttpClient.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted, TestClock } from "effect"
import { AuthenticationError, ConfigurationError, OAuthClient, Pkce, TokenInfo } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import {
  AUTH_URL,
  credentials,
  expectTokenRequests,
  isolateEnv,
  numberedTokens,
  oauthError,
  REDIRECT_URI,
  requests,
  tokenResponse,
  value,
  withOAuthClient
} from "../fixtures.js"

isolateEnv()

const BASIC = `Basic ${Buffer.from("client-id:client-secret").toString("base64")}`

const withClient = withOAuthClient

const publicOptions = { clientId: "public-id", clientSecret: undefined, publicClient: true } as const

describe("OAuthClient: construction", () => {
  it("is a Context.Tag keyed service-sdk/OAuthClient", () => {
    expect(OAuthClient.OAuthClient.key).toBe("service-sdk/OAuthClient")
  })

  it.effect("a confidential client without a secret is a ConfigurationError naming the option and the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(OAuthClient.make({ clientId: "id", authUrl: AUTH_URL }))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("clientSecret")
      expect(error.message).toContain("SERVICE_SDK_CLIENT_SECRET")
      const layered = yield* Effect.flip(Layer.build(OAuthClient.layer({ authUrl: AUTH_URL })).pipe(Effect.scoped))
      expect(layered).toBeInstanceOf(ConfigurationError)
      expect(layered.message).toContain("clientId")
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )

  it.effect("bad options fail with ConfigurationError in the error channel", () =>
    Effect.gen(function* () {
      const fails = (options: unknown) =>
        Effect.flip(OAuthClient.make(options as OAuthClient.Options)).pipe(Effect.map((error) => error.message))
      expect(yield* fails({ ...credentials, timeout: -1 })).toMatch(/^timeout must be/)
      expect(yield* fails({ ...credentials, maxRetries: 1.5 })).toMatch(/^maxRetries must be/)
      expect(yield* fails({ ...credentials, redirectUri: "not a url" })).toMatch(/^redirectUri is not a valid URL/)
      expect(yield* fails({ ...credentials, authUrl: "ftp://127.0.0.1" })).toMatch(/^authUrl must be/)
      expect(yield* fails({ ...credentials, clientId: 7 })).toMatch(/^clientId must be a string/)
      expect(yield* fails(null)).toMatch(/options must be an object/)
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )

  it.effect("falls back to the environment through Config (credentials, auth URL, redirect URI)", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make()
      const url = new URL(oauth.authorizationUrl({ state: "s" }))
      expect(url.origin + url.pathname).toBe("http://127.0.0.1:4999/authorize")
      expect(url.searchParams.get("client_id")).toBe("env-id")
      expect(url.searchParams.get("redirect_uri")).toBe("http://127.0.0.1:9/cb")
      yield* oauth.clientCredentials()
      const [request] = yield* requests
      expect(request!.headers.authorization).toBe(`Basic ${Buffer.from("env-id:env-secret").toString("base64")}`)
    }).pipe(
      Effect.provide(MockHttpClient.layer(numberedTokens())),
      Effect.withConfigProvider(
        ConfigProvider.fromMap(
          new Map([
            ["SERVICE_SDK_CLIENT_ID", "env-id"],
            ["SERVICE_SDK_CLIENT_SECRET", "env-secret"],
            ["SERVICE_SDK_AUTH_URL", "http://127.0.0.1:4999"],
            ["SERVICE_SDK_REDIRECT_URI", "http://127.0.0.1:9/cb"]
          ])
        )
      )
    )
  )
})

describe("OAuthClient: authorization URL and sign-in", () => {
  it.effect("authorizationUrl carries the contract's parameters, login_hint included", () =>
    withClient(
      numberedTokens(),
      (oauth) =>
        Effect.sync(() => {
          const url = new URL(
            oauth.authorizationUrl({
              state: "st",
              scope: ["a", "b"],
              showDialog: true,
              codeChallenge: "ch",
              loginHint: "user-7"
            })
          )
          expect(url.origin + url.pathname).toBe(`${AUTH_URL}/authorize`)
          expect(Object.fromEntries(url.searchParams)).toEqual({
            response_type: "code",
            client_id: "client-id",
            redirect_uri: REDIRECT_URI,
            scope: "a b",
            state: "st",
            show_dialog: "true",
            code_challenge: "ch",
            code_challenge_method: "S256",
            login_hint: "user-7"
          })
          const plain = new URL(oauth.authorizationUrl())
          expect([...plain.searchParams.keys()]).toEqual(["response_type", "client_id", "redirect_uri", "scope"])
          expect(plain.searchParams.get("scope")).toBe("default-scope")
        }),
      { scope: "default-scope" }
    )
  )

  it.effect("beginAuthorization: a fresh state and PKCE pair; completeAuthorization exchanges with the verifier", () =>
    withClient(numberedTokens({ refresh_token: "refresh-1" }), (oauth) =>
      Effect.gen(function* () {
        const pending = yield* oauth.beginAuthorization({ loginHint: "user-7" })
        const other = yield* oauth.beginAuthorization()
        expect(pending.state).not.toBe(other.state)
        expect(pending.state).toMatch(/^[A-Za-z0-9_-]{43}$/)
        const url = new URL(pending.url)
        expect(url.searchParams.get("state")).toBe(pending.state)
        expect(url.searchParams.get("login_hint")).toBe("user-7")
        expect(url.searchParams.get("code_challenge")).toBe(Pkce.challengeOf(Redacted.value(pending.codeVerifier)))
        yield* expectTokenRequests(0)

        const token = yield* oauth.completeAuthorization(
          `${REDIRECT_URI}?code=the-code&state=${pending.state}`,
          pending
        )
        expect(token).toBeInstanceOf(TokenInfo)
        expect(value(token.accessToken)).toBe("tok-1")
        expect(value(token.refreshToken!)).toBe("refresh-1")
        const [request] = yield* requests
        expect(request!.headers.authorization).toBe(BASIC)
        expect(Object.fromEntries(request!.form)).toEqual({
          grant_type: "authorization_code",
          code: "the-code",
          redirect_uri: REDIRECT_URI,
          code_verifier: Redacted.value(pending.codeVerifier)
        })
      })
    )
  )

  it.effect("completeAuthorization checks the state before anything else: no request, no error text echoed", () =>
    withClient(numberedTokens({ refresh_token: "r" }), (oauth) =>
      Effect.gen(function* () {
        const pending = yield* oauth.beginAuthorization()
        for (const callback of [
          "?code=c&state=forged",
          "?error=server_error&error_description=injected&state=forged",
          "?error=access_denied",
          "?code=c"
        ]) {
          const error = yield* Effect.flip(oauth.completeAuthorization(callback, pending))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect(error.message).toMatch(/^state mismatch/)
          expect(error.message).not.toContain("injected")
        }
        yield* expectTokenRequests(0)
        // the forgeries did not use up the pending sign-in
        const token = yield* oauth.completeAuthorization(`?code=c&state=${pending.state}`, pending)
        expect(value(token.accessToken)).toBe("tok-1")
      })
    )
  )

  it.effect("an error callback with the right state fails with the cleaned error; a callback without code fails", () =>
    withClient(numberedTokens({ refresh_token: "r" }), (oauth) =>
      Effect.gen(function* () {
        const pending = yield* oauth.beginAuthorization()
        const denied = yield* Effect.flip(
          oauth.completeAuthorization(
            `?${new URLSearchParams({ state: pending.state, error: "access_denied", error_description: "no\u001b[2J\u202E" })}`,
            pending
          )
        )
        expect(denied).toBeInstanceOf(AuthenticationError)
        expect((denied as AuthenticationError).payload).toEqual({ error: "access_denied", error_description: "no" })
        const next = yield* oauth.beginAuthorization()
        const noCode = yield* Effect.flip(oauth.completeAuthorization(`?state=${next.state}`, next))
        expect(noCode.message).toContain("no code")
        yield* expectTokenRequests(0)
      })
    )
  )

  it.effect("owns nothing: a pending sign-in completed twice is sent twice (its single use is the owner's)", () =>
    withClient(numberedTokens({ refresh_token: "r" }), (oauth) =>
      Effect.gen(function* () {
        const pending = yield* oauth.beginAuthorization({ state: "fixed-state" })
        const callback = `?code=c1&state=fixed-state`
        const first = yield* oauth.completeAuthorization(callback, pending)
        const second = yield* oauth.completeAuthorization(callback, pending)
        expect([value(first.accessToken), value(second.accessToken)]).toEqual(["tok-1", "tok-2"])
        yield* expectTokenRequests(2)
      })
    )
  )

  it.effect("completeAuthorization without a pending state is a ConfigurationError", () =>
    withClient(numberedTokens({ refresh_token: "r" }), (oauth) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          oauth.completeAuthorization("?code=c&state=s", { state: "", codeVerifier: "v" })
        )
        expect(error).toBeInstanceOf(ConfigurationError)
        yield* expectTokenRequests(0)
      })
    )
  )
})

describe("OAuthClient: token requests, nothing cached", () => {
  it.effect("exchangeCode: the token as TokenInfo, expiry from the Clock; a response without refresh_token fails", () =>
    withClient(
      (_request, call) => (call === 0 ? tokenResponse("tok-1", { refresh_token: "r-1" }) : tokenResponse("tok-2")),
      (oauth) =>
        Effect.gen(function* () {
          yield* TestClock.setTime(1_000_000)
          const token = yield* oauth.exchangeCode("code-1", { codeVerifier: "v".repeat(43) })
          expect(token.expiresAt).toBe(1_000 + 3600)
          expect(value(token.refreshToken!)).toBe("r-1")
          const missing = yield* Effect.flip(oauth.exchangeCode("code-2"))
          expect(missing).toBeInstanceOf(AuthenticationError)
          expect(missing.message).toContain("refresh_token")
          expect(yield* Effect.flip(oauth.exchangeCode(" "))).toBeInstanceOf(ConfigurationError)
          yield* expectTokenRequests(2)
        })
    )
  )

  it.effect("refresh keeps the given refresh token when the response omits one; a rotated one replaces it", () =>
    withClient(
      (_request, call) =>
        call === 0 ? tokenResponse("tok-1") : tokenResponse("tok-2", { refresh_token: "rotated", scope: "a" }),
      (oauth) =>
        Effect.gen(function* () {
          const first = yield* oauth.refresh("refresh-0")
          expect(value(first.accessToken)).toBe("tok-1")
          expect(value(first.refreshToken!)).toBe("refresh-0")
          const second = yield* oauth.refresh(Redacted.make("refresh-0"), { scope: ["a"] })
          expect(value(second.refreshToken!)).toBe("rotated")
          expect(second.scope).toBe("a")
          const sent = yield* requests
          expect(Object.fromEntries(sent[0]!.form)).toEqual({ grant_type: "refresh_token", refresh_token: "refresh-0" })
          expect(Object.fromEntries(sent[1]!.form)).toEqual({
            grant_type: "refresh_token",
            refresh_token: "refresh-0",
            scope: "a"
          })
        })
    )
  )

  it.effect("refresh: invalid_grant is final (one request); 503 is retried", () =>
    withClient(
      (_request, call) =>
        call === 0
          ? oauthError(400, "invalid_grant", "revoked")
          : call === 1
            ? MockHttpClient.json({}, 503)
            : tokenResponse("tok-3"),
      (oauth) =>
        Effect.gen(function* () {
          const rejected = yield* Effect.flip(oauth.refresh("r"))
          expect((rejected as AuthenticationError).payload?.error).toBe("invalid_grant")
          yield* expectTokenRequests(1)
          const fiber = yield* Effect.fork(oauth.refresh("r"))
          yield* TestClock.adjust("10 seconds")
          const token = yield* fiber
          expect(value(token.accessToken)).toBe("tok-3")
          yield* expectTokenRequests(3)
        })
    )
  )

  it.effect("clientCredentials: the client's scope or the call's; every call is a request (nothing cached)", () =>
    withClient(
      numberedTokens(),
      (oauth) =>
        Effect.gen(function* () {
          const first = yield* oauth.clientCredentials()
          const second = yield* oauth.clientCredentials({ scope: "other" })
          expect(value(first.accessToken)).toBe("tok-1")
          expect(value(second.accessToken)).toBe("tok-2")
          expect(first.scope).toBe("catalog-read")
          const sent = yield* requests
          expect(sent.map((request) => request.form.get("scope"))).toEqual(["catalog-read", "other"])
          expect(sent.every((request) => request.headers.authorization === BASIC)).toBe(true)
        }),
      { scope: "catalog-read" }
    )
  )
})

describe("OAuthClient: public clients", () => {
  it.effect("client_id in every body, no Authorization header; PKCE required; no client credentials grant", () =>
    withClient(
      numberedTokens({ refresh_token: "r-1" }),
      (oauth) =>
        Effect.gen(function* () {
          const noVerifier = yield* Effect.flip(oauth.exchangeCode("code"))
          expect(noVerifier).toBeInstanceOf(ConfigurationError)
          expect(noVerifier.message).toContain("PKCE")
          const cc = yield* Effect.flip(oauth.clientCredentials())
          expect(cc).toBeInstanceOf(AuthenticationError)
          yield* expectTokenRequests(0)

          const pending = yield* oauth.beginAuthorization()
          yield* oauth.completeAuthorization(`?code=c&state=${pending.state}`, pending)
          yield* oauth.refresh("r-1")
          const sent = yield* requests
          expect(sent).toHaveLength(2)
          for (const request of sent) {
            expect(request.headers.authorization).toBeUndefined()
            expect(request.form.get("client_id")).toBe("public-id")
          }
          expect(sent[0]!.form.get("code_verifier")).toBe(Redacted.value(pending.codeVerifier))
        }),
      publicOptions
    )
  )

  it.effect("a public client needs no secret from the environment", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuthClient.make({ clientId: "public-id", publicClient: true, authUrl: AUTH_URL })
      expect(new URL(oauth.authorizationUrl()).searchParams.get("client_id")).toBe("public-id")
      expect(
        Option.isNone(Option.fromNullable(new URL(oauth.authorizationUrl()).searchParams.get("redirect_uri")))
      ).toBe(true)
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )
})
