import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, FastCheck as fc, Layer, Redacted } from "effect"
import { AuthorizationCode, authorizeLocal, ClientCredentials, Pkce, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { createHash } from "node:crypto"
import * as Net from "node:net"
import { requestSecrets } from "../../src/internal/tokenEndpoint.js"
import {
  AUTH_URL,
  authorizationCodeLayer,
  credentials,
  expectTokenRequests,
  isolateEnv,
  numberedTokens,
  REDIRECT_URI,
  requests,
  value
} from "../fixtures.js"

isolateEnv()

const UNRESERVED = /^[A-Za-z0-9\-._~]+$/
const BASIC = `Basic ${Buffer.from("client-id:client-secret").toString("base64")}`
const publicOptions = { clientId: "public-id", authUrl: AUTH_URL, redirectUri: REDIRECT_URI, publicClient: true }
const publicLayer = (options: AuthorizationCode.Options = {}) =>
  AuthorizationCode.layer({ ...publicOptions, ...options }).pipe(
    Layer.provideMerge(MockHttpClient.layer(numberedTokens({ refresh_token: "refresh-1" })))
  )
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

/** The last request as the wire carries it: body text and the headers that matter. */
const lastRequest = Effect.map(requests, (all) => {
  const request = all[all.length - 1]!
  return {
    body: request.body,
    authorization: request.headers.authorization,
    contentType: request.headers["content-type"]
  }
})
const provider = AuthorizationCode

describe("Pkce", () => {
  it("matches RFC 7636 Appendix B's example", () => {
    const bytes = Uint8Array.from([
      116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240,
      91, 88, 5, 88, 83, 132, 141, 121
    ])
    const pair = Pkce.fromBytes(bytes)
    expect(Redacted.value(pair.verifier)).toBe(VERIFIER)
    expect(pair.challenge).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    expect(pair.method).toBe("S256")
    expect(Pkce.challengeOf(VERIFIER)).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
  })

  it.effect("make: a 43-character unreserved verifier, fresh every time, with its S256 challenge", () =>
    Effect.gen(function* () {
      const seen = new Set<string>()
      for (let i = 0; i < 50; i++) {
        const pair = yield* Pkce.make
        const verifier = Redacted.value(pair.verifier)
        expect(verifier).toHaveLength(43)
        expect(verifier).toMatch(UNRESERVED)
        expect(pair.challenge).toBe(createHash("sha256").update(verifier).digest("base64url"))
        expect(pair.method).toBe("S256")
        expect(String(pair.verifier)).not.toContain(verifier)
        seen.add(verifier)
      }
      expect(seen.size).toBe(50)
    })
  )

  it.prop(
    "every verifier is 43-128 unreserved characters and its challenge is base64url(SHA-256(verifier))",
    [fc.uint8Array({ minLength: 32, maxLength: 96 })],
    ([bytes]) => {
      const pair = Pkce.fromBytes(bytes)
      const verifier = Redacted.value(pair.verifier)
      expect(verifier.length).toBeGreaterThanOrEqual(43)
      expect(verifier.length).toBeLessThanOrEqual(128)
      expect(verifier).toMatch(UNRESERVED)
      expect(Pkce.isVerifier(verifier)).toBe(true)
      const digest = createHash("sha256").update(Buffer.from(verifier, "ascii")).digest()
      expect(Buffer.from(pair.challenge, "base64url").equals(digest)).toBe(true)
      expect(pair.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
    }
  )

  it("isVerifier refuses short, long and reserved-character verifiers", () => {
    expect(Pkce.isVerifier("a".repeat(42))).toBe(false)
    expect(Pkce.isVerifier("a".repeat(129))).toBe(false)
    expect(Pkce.isVerifier(`${"a".repeat(43)}+`)).toBe(false)
    expect(Pkce.isVerifier("a".repeat(128))).toBe(true)
  })
})

describe("AuthorizationCode with PKCE: the authorization URL", () => {
  it.effect("codeChallenge adds code_challenge and code_challenge_method=S256, last", () =>
    Effect.gen(function* () {
      const url = new URL((yield* provider).getAuthorizationUrl({ state: "s", codeChallenge: "the-challenge" }))
      expect([...url.searchParams]).toEqual([
        ["response_type", "code"],
        ["client_id", "client-id"],
        ["redirect_uri", REDIRECT_URI],
        ["state", "s"],
        ["code_challenge", "the-challenge"],
        ["code_challenge_method", "S256"]
      ])
      const none = new URL((yield* provider).getAuthorizationUrl({ state: "s", codeChallenge: "" }))
      expect(none.searchParams.has("code_challenge")).toBe(false)
      expect(none.searchParams.has("code_challenge_method")).toBe(false)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )

  it.effect("beginAuthorization: fresh state and PKCE pair, both in the URL", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      const first = yield* ac.beginAuthorization({ scope: ["a", "b"], showDialog: true })
      const second = yield* ac.beginAuthorization()
      const url = new URL(first.url)
      expect(url.searchParams.get("state")).toBe(first.state)
      expect(first.state).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(url.searchParams.get("scope")).toBe("a b")
      expect(url.searchParams.get("show_dialog")).toBe("true")
      expect(url.searchParams.get("code_challenge")).toBe(Pkce.challengeOf(first.codeVerifier))
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(first.url).not.toContain(Redacted.value(first.codeVerifier))
      expect(second.state).not.toBe(first.state)
      expect(Redacted.value(second.codeVerifier)).not.toBe(Redacted.value(first.codeVerifier))
      const given = yield* ac.beginAuthorization({ state: "mine" })
      expect(given.state).toBe("mine")
      expect(new URL(given.url).searchParams.get("state")).toBe("mine")
      yield* expectTokenRequests(0)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )
})

describe("token requests: exact bodies and headers", () => {
  it.effect("confidential: client_credentials with Basic and no client_id in the body", () =>
    Effect.gen(function* () {
      yield* Effect.flatMap(TokenProvider, (p) => p.getAccessToken)
      expect(yield* lastRequest).toEqual({
        body: "grant_type=client_credentials&scope=s1",
        authorization: BASIC,
        contentType: "application/x-www-form-urlencoded"
      })
    }).pipe(
      Effect.provide(
        ClientCredentials.layer({ ...credentials, scope: "s1" }).pipe(
          Layer.provideMerge(MockHttpClient.layer(numberedTokens()))
        )
      )
    )
  )

  it.effect("confidential: authorization_code with and without a verifier, then refresh_token", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      yield* ac.exchangeCode("code-1")
      expect(yield* lastRequest).toEqual({
        body: `grant_type=authorization_code&code=code-1&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
        authorization: BASIC,
        contentType: "application/x-www-form-urlencoded"
      })
      yield* ac.exchangeCode("code-2", { codeVerifier: Redacted.make(VERIFIER) })
      expect(yield* lastRequest).toEqual({
        body: `grant_type=authorization_code&code=code-2&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&code_verifier=${VERIFIER}`,
        authorization: BASIC,
        contentType: "application/x-www-form-urlencoded"
      })
      yield* ac.forceRefresh(Redacted.make("tok-2"))
      expect(yield* lastRequest).toEqual({
        body: "grant_type=refresh_token&refresh_token=refresh-1",
        authorization: BASIC,
        contentType: "application/x-www-form-urlencoded"
      })
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "refresh-1" }))))
  )

  it.effect("public: client_id in every body, no Authorization header", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      expect(ac.publicClient).toBe(true)
      yield* ac.exchangeCode("code-1", { codeVerifier: VERIFIER })
      expect(yield* lastRequest).toEqual({
        body: `grant_type=authorization_code&code=code-1&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&code_verifier=${VERIFIER}&client_id=public-id`,
        authorization: undefined,
        contentType: "application/x-www-form-urlencoded"
      })
      yield* ac.forceRefresh(Redacted.make("tok-1"))
      expect(yield* lastRequest).toEqual({
        body: "grant_type=refresh_token&refresh_token=refresh-1&client_id=public-id",
        authorization: undefined,
        contentType: "application/x-www-form-urlencoded"
      })
      yield* expectTokenRequests(2)
    }).pipe(Effect.provide(publicLayer()))
  )

  it.effect("public: a refresh from the constructor's refreshToken carries client_id too", () =>
    Effect.gen(function* () {
      expect(value(yield* Effect.flatMap(TokenProvider, (p) => p.getAccessToken))).toBe("tok-1")
      expect(yield* lastRequest).toEqual({
        body: "grant_type=refresh_token&refresh_token=stored-refresh&client_id=public-id",
        authorization: undefined,
        contentType: "application/x-www-form-urlencoded"
      })
    }).pipe(Effect.provide(publicLayer({ refreshToken: "stored-refresh" })))
  )

  it.effect("public: exchangeCode without a verifier is a ConfigurationError, with no request", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip((yield* provider).exchangeCode("code-1"))
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toContain("public clients must use PKCE")
      yield* expectTokenRequests(0)
    }).pipe(Effect.provide(publicLayer()))
  )

  it.effect("an empty verifier is a ConfigurationError; any other is sent as given (the server judges it)", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      for (const codeVerifier of ["", "  ", Redacted.make("")]) {
        const error = yield* Effect.flip(ac.exchangeCode("code-1", { codeVerifier }))
        expect(error._tag).toBe("ConfigurationError")
      }
      yield* expectTokenRequests(0)
      yield* ac.exchangeCode("code-1", { codeVerifier: "short-verifier" })
      expect((yield* requests)[0]!.form.get("code_verifier")).toBe("short-verifier")
    }).pipe(Effect.provide(publicLayer()))
  )
})

describe("public client configuration", () => {
  const env = (vars: Record<string, string>) =>
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))

  it.scoped("needs no secret and never reads SERVICE_SDK_CLIENT_SECRET", () =>
    Effect.gen(function* () {
      const ac = yield* AuthorizationCode.make({ redirectUri: REDIRECT_URI, authUrl: AUTH_URL, publicClient: true })
      yield* ac.exchangeCode("code-1", { codeVerifier: VERIFIER })
      expect(yield* lastRequest).toMatchObject({ authorization: undefined })
      const all = yield* requests
      expect(all[0]!.form.get("client_id")).toBe("env-client")
      expect(all[0]!.body).not.toContain("env-secret")
    }).pipe(
      env({ SERVICE_SDK_CLIENT_ID: "env-client", SERVICE_SDK_CLIENT_SECRET: "env-secret" }),
      Effect.provide(MockHttpClient.layer(numberedTokens({ refresh_token: "r" })))
    )
  )

  it.scoped("a public client still needs a client id; a secret passed anyway is never sent", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(AuthorizationCode.make({ authUrl: AUTH_URL, publicClient: true }))
      expect(missing.message).toContain("SERVICE_SDK_CLIENT_ID")
      const ac = yield* AuthorizationCode.make({ ...publicOptions, clientSecret: Redacted.make("s3cr3t-value") })
      expect(ac.publicClient).toBe(true)
      yield* ac.exchangeCode("code-1", { codeVerifier: VERIFIER })
      const [request] = yield* requests
      expect(request!.headers.authorization).toBeUndefined()
      expect(request!.body).not.toContain("s3cr3t-value")
      expect(request!.form.get("client_id")).toBe("public-id")
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens({ refresh_token: "r" }))))
  )

  it.scoped("ClientCredentials still requires a secret, whatever plain JS passes", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        ClientCredentials.make({ clientId: "id", authUrl: AUTH_URL, publicClient: true } as ClientCredentials.Options)
      )
      expect(error.message).toContain("clientSecret")
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )
})

describe("completeAuthorization", () => {
  it.effect("parses the callback with the pending state and exchanges the code with its verifier; cached", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      const pending = yield* ac.beginAuthorization()
      const token = yield* ac.completeAuthorization(`${REDIRECT_URI}?code=the-code&state=${pending.state}`, pending)
      expect(value(token.accessToken)).toBe("tok-1")
      const all = yield* requests
      expect(all).toHaveLength(1)
      expect(all[0]!.form.get("code")).toBe("the-code")
      expect(all[0]!.form.get("code_verifier")).toBe(Redacted.value(pending.codeVerifier))
      expect(value(yield* ac.getAccessToken)).toBe("tok-1")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(publicLayer()))
  )

  it.effect("a state mismatch or an error callback fails with AuthenticationError and no request", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      const pending = yield* ac.beginAuthorization()
      const mismatch = yield* Effect.flip(ac.completeAuthorization(`${REDIRECT_URI}?code=c&state=forged`, pending))
      expect(mismatch._tag).toBe("AuthenticationError")
      expect(mismatch.message).toContain("state")
      const denied = yield* Effect.flip(
        ac.completeAuthorization(`${REDIRECT_URI}?error=access_denied&state=${pending.state}`, pending)
      )
      expect(denied._tag).toBe("AuthenticationError")
      const noState = yield* Effect.flip(
        ac.completeAuthorization(`${REDIRECT_URI}?code=c`, { state: "", codeVerifier: pending.codeVerifier })
      )
      expect(noState._tag).toBe("ConfigurationError")
      yield* expectTokenRequests(0)
    }).pipe(Effect.provide(publicLayer()))
  )

  it.effect("a plain-string verifier works as well as a Redacted one (confidential client)", () =>
    Effect.gen(function* () {
      const ac = yield* provider
      const token = yield* ac.completeAuthorization("?code=c2&state=st", { state: "st", codeVerifier: VERIFIER })
      expect(value(token.accessToken)).toBe("tok-1")
      const all = yield* requests
      expect(all[0]!.form.get("code_verifier")).toBe(VERIFIER)
      expect(all[0]!.headers.authorization).toBe(BASIC)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "r" }))))
  )
})

describe("the verifier is one of the known secrets of a request (for masking echoed text)", () => {
  it("authorization_code: client secret, code and verifier; refresh: the refresh token; public: no client secret", () => {
    const code = {
      grant_type: "authorization_code",
      code: Redacted.make("the-code"),
      redirect_uri: REDIRECT_URI
    } as const
    expect(requestSecrets({ ...code, code_verifier: Redacted.make(VERIFIER) }, Redacted.make("s3cret"))).toEqual([
      "s3cret",
      "the-code",
      VERIFIER
    ])
    expect(requestSecrets(code, undefined)).toEqual(["the-code"])
    expect(
      requestSecrets({ grant_type: "refresh_token", refresh_token: Redacted.make("rt") }, Redacted.make("s"))
    ).toEqual(["s", "rt"])
  })
})

describe("authorizeLocal uses PKCE for both client kinds", () => {
  const freePort = Effect.promise(
    () =>
      new Promise<number>((resolve) => {
        const server = Net.createServer()
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as Net.AddressInfo
          server.close(() => resolve(port))
        })
      })
  )
  /** Plays the authorization server's redirect: straight to the callback with a code and the URL's state. */
  const redirectBack = (url: string) => {
    const authorization = new URL(url)
    const callback = new URL(authorization.searchParams.get("redirect_uri")!)
    callback.searchParams.set("code", "local-code")
    callback.searchParams.set("state", authorization.searchParams.get("state")!)
    return Effect.promise(() => fetch(callback).then((response) => response.text()))
  }

  for (const kind of ["public", "confidential"] as const) {
    it.live(`${kind}: the exchange carries the verifier of the URL's S256 challenge`, () =>
      Effect.gen(function* () {
        const port = yield* freePort
        const redirectUri = `http://127.0.0.1:${port}/callback`
        const options =
          kind === "public" ? { ...publicOptions, redirectUri } : { ...credentials, redirectUri, authUrl: AUTH_URL }
        const opened: Array<string> = []
        const token = yield* authorizeLocal({
          openBrowser: false,
          timeout: "10 seconds",
          onAuthorizationUrl: (url) => {
            opened.push(url)
            return redirectBack(url)
          }
        }).pipe(Effect.provide(AuthorizationCode.layer(options)))
        expect(value(token.accessToken)).toBe("tok-1")
        const url = new URL(opened[0]!)
        expect(url.searchParams.get("code_challenge_method")).toBe("S256")
        const [request] = yield* requests
        const verifier = request!.form.get("code_verifier")!
        expect(Pkce.isVerifier(verifier)).toBe(true)
        expect(Pkce.challengeOf(verifier)).toBe(url.searchParams.get("code_challenge"))
        expect(request!.form.get("code")).toBe("local-code")
        expect(request!.headers.authorization === undefined).toBe(kind === "public")
        expect(request!.form.get("client_id")).toBe(kind === "public" ? "public-id" : null)
      }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens({ refresh_token: "r" }))))
    )
  }
})

describe("properties of the PKCE authorization URL", () => {
  it.effect.prop(
    "any state and challenge round-trip through the URL; the method is always S256, once",
    [fc.string({ minLength: 1 }), fc.string({ minLength: 1 })],
    ([state, codeChallenge]) =>
      Effect.gen(function* () {
        const url = new URL((yield* provider).getAuthorizationUrl({ state, codeChallenge }))
        expect(url.searchParams.get("state")).toBe(state)
        expect(url.searchParams.getAll("code_challenge")).toEqual([codeChallenge])
        expect(url.searchParams.getAll("code_challenge_method")).toEqual(["S256"])
        expect(url.searchParams.getAll("client_id")).toEqual(["client-id"])
      }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )
})
