import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Redacted, TestClock } from "effect"
import { AuthenticationError, AuthorizationCode, TokenCache, TokenProvider } from "@service-sdk/effect"
import { type MockHandler, MockHttpClient } from "@service-sdk/effect/testing"
import {
  AUTH_URL,
  authorizationCodeLayer,
  credentials,
  expectTokenRequests,
  numberedTokens,
  oauthError,
  REDIRECT_URI,
  requests,
  tokenResponse,
  value
} from "../fixtures.js"

const authorizationUrl = (urlOptions?: AuthorizationCode.UrlOptions, options: AuthorizationCode.Options = {}) =>
  Effect.map(AuthorizationCode, (provider) => new URL(provider.getAuthorizationUrl(urlOptions))).pipe(
    Effect.provide(authorizationCodeLayer(numberedTokens(), options))
  )

const getToken = Effect.flatMap(TokenProvider, (provider) => provider.getAccessToken).pipe(Effect.map(value))
const exchange = (code: string) => Effect.flatMap(AuthorizationCode, (provider) => provider.exchangeCode(code))
const lastForm = Effect.map(requests, (all) => Object.fromEntries(all[all.length - 1]!.form))

describe("AuthorizationCode.getAuthorizationUrl", () => {
  it.effect("has response_type, client_id and redirect_uri, and nothing unasked", () =>
    Effect.gen(function* () {
      const url = yield* authorizationUrl()
      expect(`${url.origin}${url.pathname}`).toBe(`${AUTH_URL}/authorize`)
      expect([...url.searchParams]).toEqual([
        ["response_type", "code"],
        ["client_id", "client-id"],
        ["redirect_uri", REDIRECT_URI]
      ])
    })
  )

  it.effect("joins a scope list with single spaces", () =>
    Effect.gen(function* () {
      const url = yield* authorizationUrl({}, { scope: ["user-read-private", "user-read-email"] })
      expect(url.searchParams.get("scope")).toBe("user-read-private user-read-email")
      expect(url.search).toContain("scope=user-read-private+user-read-email")
    })
  )

  it.effect("normalises commas and whitespace runs in a scope string", () =>
    Effect.gen(function* () {
      const url = yield* authorizationUrl({}, { scope: " user-read-private,, user-read-email\n\tplaylist-read " })
      expect(url.searchParams.get("scope")).toBe("user-read-private user-read-email playlist-read")
    })
  )

  it.effect("the scope option of the call overrides the provider's", () =>
    Effect.gen(function* () {
      const url = yield* authorizationUrl({ scope: ["a", "b"] }, { scope: "provider-scope" })
      expect(url.searchParams.getAll("scope")).toEqual(["a b"])
      const same = yield* authorizationUrl({}, { scope: "provider-scope" })
      expect(same.searchParams.get("scope")).toBe("provider-scope")
    })
  )

  it.effect("state is sent when given; show_dialog only when asked", () =>
    Effect.gen(function* () {
      const url = yield* authorizationUrl({ state: "xyz 123&=", showDialog: true })
      expect(url.searchParams.get("state")).toBe("xyz 123&=")
      expect(url.searchParams.get("show_dialog")).toBe("true")
      const notAsked = yield* authorizationUrl({ state: "s", showDialog: false })
      expect(notAsked.searchParams.has("show_dialog")).toBe(false)
      const emptyState = yield* authorizationUrl({ state: "" })
      expect(emptyState.searchParams.has("state")).toBe(false)
    })
  )

  it.scoped("has no redirect_uri parameter when none is configured", () =>
    Effect.gen(function* () {
      const provider = yield* AuthorizationCode.make(credentials)
      const url = new URL(provider.getAuthorizationUrl({ state: "s" }))
      expect(url.searchParams.has("redirect_uri")).toBe(false)
      expect(provider.redirectUri).toBeUndefined()
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens())))
  )
})

describe("AuthorizationCode.parseResponseUrl", () => {
  const parse = (url: string, expectedState?: string) =>
    Effect.either(AuthorizationCode.parseResponseUrl(url, expectedState === undefined ? {} : { expectedState }))
  const failure = (result: Either.Either<string, AuthenticationError>) => {
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.getLeft(result).pipe(Option.getOrThrow)
    expect(error).toBeInstanceOf(AuthenticationError)
    return error
  }

  it.effect("an error parameter fails with error and error_description in the payload, before the code", () =>
    Effect.gen(function* () {
      const error = failure(
        yield* parse(`${REDIRECT_URI}?error=access_denied&error_description=User+said+no&code=c&state=s`, "s")
      )
      expect(error.payload).toEqual({ error: "access_denied", error_description: "User said no" })
      expect(error.message).toContain("access_denied")
      const bare = failure(yield* parse("error=server_error"))
      expect(bare.payload).toEqual({ error: "server_error" })
    })
  )

  it.effect(
    "a state mismatch is checked before the error parameter (a forged callback is not the server's answer)",
    () =>
      Effect.gen(function* () {
        for (const url of [
          `${REDIRECT_URI}?error=server_error&error_description=forged&state=evil`,
          `${REDIRECT_URI}?error=server_error&error_description=forged`
        ]) {
          const error = failure(yield* parse(url, "good"))
          expect(error.message).toMatch(/^state mismatch/)
          expect(error.message).not.toContain("server_error")
          expect(error.message).not.toContain("forged")
          expect(error.payload).toBeUndefined()
        }
      })
  )

  it.effect(
    "a hostile error_description: escape sequences, control and bidi characters removed, capped at 512 characters",
    () =>
      Effect.gen(function* () {
        const hostile = "\u001b]0;pwned\u0007\u001b[2Jok\r\nX: 1\u202Eevil\u0000\u009b"
        const error = failure(
          yield* parse(
            `?${new URLSearchParams({ error: "access_denied\u001b[31m", error_description: hostile, state: "s" })}`,
            "s"
          )
        )
        // escape sequences go whole: no `[2J` or `]0;title` left behind
        expect(error.payload).toEqual({ error: "access_denied", error_description: "okX: 1evil" })
        for (const text of [error.message, error.payload!.error, error.payload!.error_description!]) {
          expect(text).not.toMatch(/[\p{Cc}\p{Cf}]/u)
        }
        const huge = failure(
          yield* parse(
            `?${new URLSearchParams({ error: "x", error_description: "\u202E".repeat(10) + "A".repeat(1_000_000) })}`
          )
        )
        expect(huge.payload?.error_description).toBe("A".repeat(512))
        expect(huge.message.length).toBeLessThan(600)
        // a cut never splits a surrogate pair
        const emoji = failure(
          yield* parse(`?${new URLSearchParams({ error: "x", error_description: `a${"😀".repeat(400)}` })}`)
        )
        expect(emoji.payload?.error_description).toBe(`a${"😀".repeat(255)}`)
      })
  )

  it.effect("no code fails", () =>
    Effect.gen(function* () {
      for (const url of [`${REDIRECT_URI}?state=s`, `${REDIRECT_URI}?code=&state=s`, "", "?"]) {
        expect(failure(yield* parse(url)).message).toContain("no code")
      }
    })
  )

  it.effect("with expectedState, a different or missing state fails", () =>
    Effect.gen(function* () {
      const mismatch = failure(yield* parse(`${REDIRECT_URI}?code=c&state=evil`, "good"))
      expect(mismatch.message).toContain("state")
      expect(mismatch.message).not.toContain("evil")
      const missing = failure(yield* parse(`${REDIRECT_URI}?code=c`, "good"))
      expect(missing.message).toContain("state")
    })
  )

  it.effect("accepts a full URL, or a bare query string with or without '?'", () =>
    Effect.gen(function* () {
      for (const url of [
        `${REDIRECT_URI}?code=the%20code&state=s1`,
        "?code=the+code&state=s1",
        "code=the%20code&state=s1",
        `  ${REDIRECT_URI}?state=s1&code=the+code  `
      ]) {
        expect(yield* parse(url, "s1")).toEqual(Either.right("the code"))
      }
      expect(yield* parse(`${REDIRECT_URI}?code=c&state=anything`)).toEqual(Either.right("c"))
    })
  )

  it.effect("a URL that cannot be parsed fails with AuthenticationError", () =>
    Effect.gen(function* () {
      failure(yield* parse("http://[bad-host/?code=c"))
    })
  )

  it.effect("the error messages never contain the code", () =>
    Effect.gen(function* () {
      const error = failure(yield* parse(`${REDIRECT_URI}?code=SECRET-CODE-1&state=x`, "y"))
      expect(`${error.message} ${String(error)} ${JSON.stringify(error)}`).not.toContain("SECRET-CODE-1")
    })
  )
})

describe("AuthorizationCode.exchangeCode", () => {
  it.effect("exchanges and caches: the next getAccessToken makes no request", () =>
    Effect.gen(function* () {
      const token = yield* exchange("code-1")
      expect(value(token.accessToken)).toBe("tok-1")
      expect(token.refreshToken && value(token.refreshToken)).toBe("refresh-1")
      expect(yield* getToken).toBe("tok-1")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "refresh-1" }))))
  )

  it.effect("a response without refresh_token is an AuthenticationError and nothing is cached", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(exchange("code-1"))
      expect(error._tag).toBe("AuthenticationError")
      expect(error.message).toContain("refresh_token")
      const next = yield* Effect.flip(getToken)
      expect(next._tag).toBe("AuthenticationError")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )

  it.effect("an empty code is a ConfigurationError without a request", () =>
    Effect.gen(function* () {
      for (const code of ["", "   "]) {
        const error = yield* Effect.flip(exchange(code))
        expect(error._tag).toBe("ConfigurationError")
      }
      yield* expectTokenRequests(0)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "r" }))))
  )

  it.scoped("a missing redirectUri is a ConfigurationError naming the option and variable", () =>
    Effect.gen(function* () {
      const provider = yield* AuthorizationCode.make(credentials)
      const error = yield* Effect.flip(provider.exchangeCode("code"))
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toContain("redirectUri")
      expect(error.message).toContain("SERVICE_SDK_REDIRECT_URI")
      yield* expectTokenRequests(0)
    }).pipe(Effect.provide(MockHttpClient.layer(numberedTokens({ refresh_token: "r" }))))
  )

  it.effect("a rejected code (invalid_grant) is an AuthenticationError with the payload", () =>
    Effect.gen(function* () {
      const error = (yield* Effect.flip(exchange("used-code"))) as AuthenticationError
      expect(error._tag).toBe("AuthenticationError")
      expect(error.status).toBe(400)
      expect(error.payload?.error).toBe("invalid_grant")
    }).pipe(
      Effect.provide(authorizationCodeLayer(() => oauthError(400, "invalid_grant", "Invalid authorization code")))
    )
  )

  it.effect("the layer provides one service as both AuthorizationCode and TokenProvider", () =>
    Effect.gen(function* () {
      const authorizationCode = yield* AuthorizationCode
      const tokenProvider = yield* TokenProvider
      expect(tokenProvider.getAccessToken).toBe(authorizationCode.getAccessToken)
      expect(authorizationCode.redirectUri).toBe(REDIRECT_URI)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )
})

describe("AuthorizationCode refresh", () => {
  it.effect("renews an expired token with the cached refresh token", () =>
    Effect.gen(function* () {
      yield* exchange("code")
      yield* TestClock.adjust("1 hour")
      expect(yield* getToken).toBe("tok-2")
      expect(yield* lastForm).toEqual({ grant_type: "refresh_token", refresh_token: "refresh-1" })
      yield* expectTokenRequests(2)
    }).pipe(
      Effect.provide(
        authorizationCodeLayer(
          MockHttpClient.script(tokenResponse("tok-1", { refresh_token: "refresh-1" }), tokenResponse("tok-2"))
        )
      )
    )
  )

  it.effect.each([
    ["a string", "boot-refresh"],
    ["a Redacted", Redacted.make("boot-refresh")]
  ] as const)("starts from the refreshToken option given as %s", ([, refreshToken]) =>
    Effect.gen(function* () {
      expect(yield* getToken).toBe("tok-1")
      expect(yield* lastForm).toEqual({ grant_type: "refresh_token", refresh_token: "boot-refresh" })
      yield* TestClock.adjust("1 hour")
      expect(yield* getToken).toBe("tok-2")
      expect(yield* lastForm).toEqual({ grant_type: "refresh_token", refresh_token: "boot-refresh" })
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens(), { refreshToken })))
  )

  it.effect.each([
    ["omits refresh_token", {}],
    ["sends refresh_token null", { refresh_token: null }],
    ["sends an empty refresh_token", { refresh_token: "" }]
  ] as const)("keeps the previous refresh token when the response %s", ([, extra]) =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* Effect.gen(function* () {
        yield* exchange("code")
        yield* TestClock.adjust("1 hour")
        expect(yield* getToken).toBe("tok-2")
        yield* TestClock.adjust("1 hour")
        expect(yield* getToken).toBe("tok-3")
        const forms = (yield* requests).map((request) => request.form.get("refresh_token"))
        expect(forms).toEqual([null, "refresh-1", "refresh-1"])
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(
            MockHttpClient.script(
              tokenResponse("tok-1", { refresh_token: "refresh-1" }),
              tokenResponse("tok-2", extra),
              tokenResponse("tok-3", extra)
            ),
            { tokenCache: cache }
          )
        )
      )
      const stored = Option.getOrThrow(yield* cache.get)
      expect(value(stored.accessToken)).toBe("tok-3")
      expect(stored.refreshToken && value(stored.refreshToken)).toBe("refresh-1")
    })
  )

  it.effect("stores a rotated refresh token and uses it next time", () =>
    Effect.gen(function* () {
      yield* exchange("code")
      yield* TestClock.adjust("1 hour")
      expect(yield* getToken).toBe("tok-2")
      yield* TestClock.adjust("1 hour")
      expect(yield* getToken).toBe("tok-3")
      const forms = (yield* requests).map((request) => request.form.get("refresh_token"))
      expect(forms).toEqual([null, "refresh-1", "refresh-2"])
    }).pipe(
      Effect.provide(
        authorizationCodeLayer((_request, call) =>
          tokenResponse(`tok-${call + 1}`, { refresh_token: `refresh-${call + 1}` })
        )
      )
    )
  )

  it.effect("forceRefresh of the current token refreshes with the cached refresh token before expiry", () =>
    Effect.gen(function* () {
      yield* exchange("code")
      const provider = yield* TokenProvider
      const rejected = yield* provider.getAccessToken
      const fresh = yield* provider.forceRefresh(rejected)
      expect(value(fresh)).toBe("tok-2")
      expect(yield* lastForm).toEqual({ grant_type: "refresh_token", refresh_token: "refresh-1" })
      expect(yield* getToken).toBe("tok-2")
      yield* expectTokenRequests(2)
    }).pipe(
      Effect.provide(
        authorizationCodeLayer((_request, call) =>
          tokenResponse(`tok-${call + 1}`, call === 0 ? { refresh_token: "refresh-1" } : {})
        )
      )
    )
  )

  it.effect("a second exchangeCode replaces the cached token and refresh token", () =>
    Effect.gen(function* () {
      yield* exchange("code-1")
      yield* exchange("code-2")
      expect(yield* getToken).toBe("tok-2")
      yield* TestClock.adjust("1 hour")
      expect(yield* getToken).toBe("tok-3")
      expect(yield* lastForm).toEqual({ grant_type: "refresh_token", refresh_token: "refresh-2" })
    }).pipe(
      Effect.provide(
        authorizationCodeLayer((_request, call) =>
          tokenResponse(`tok-${call + 1}`, { refresh_token: `refresh-${call + 1}` })
        )
      )
    )
  )

  it.effect("keeps the scope of the previous token when the refresh response has none", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      yield* Effect.gen(function* () {
        yield* exchange("code")
        yield* TestClock.adjust("1 hour")
        yield* getToken
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(
            MockHttpClient.script(
              tokenResponse("tok-1", { refresh_token: "r", scope: "granted" }),
              tokenResponse("tok-2")
            ),
            { tokenCache: cache }
          )
        )
      )
      const stored = Option.getOrThrow(yield* cache.get)
      expect(value(stored.accessToken)).toBe("tok-2")
      expect(stored.scope).toBe("granted")
    })
  )

  it.effect(
    "no token and no refresh token is an AuthenticationError telling to call exchangeCode, without a request",
    () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(getToken)
        expect(error).toBeInstanceOf(AuthenticationError)
        expect(error.message).toContain("exchangeCode")
        const forced = yield* Effect.flip(
          Effect.flatMap(TokenProvider, (provider) => provider.forceRefresh(Redacted.make("whatever")))
        )
        expect(forced.message).toContain("exchangeCode")
        yield* expectTokenRequests(0)
      }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )

  it.effect("a revoked refresh token (invalid_grant) is final and keeps the cached entry", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      const error = yield* Effect.gen(function* () {
        yield* exchange("code")
        yield* TestClock.adjust("1 hour")
        return yield* Effect.flip(getToken)
      }).pipe(
        Effect.provide(
          authorizationCodeLayer(
            MockHttpClient.script(tokenResponse("tok-1", { refresh_token: "r" }), oauthError(400, "invalid_grant")),
            { tokenCache: cache }
          )
        )
      )
      expect((error as AuthenticationError).payload?.error).toBe("invalid_grant")
      expect(value(Option.getOrThrow(yield* cache.get).accessToken)).toBe("tok-1")
    })
  )
})

describe("AuthorizationCode sign-in: a pending sign-in is used up only by the token endpoint's answer", () => {
  const complete = (callback: string, pending: AuthorizationCode.Pending) =>
    Effect.flatMap(AuthorizationCode, (provider) => provider.completeAuthorization(callback, pending))
  const begin = (state?: string) =>
    Effect.flatMap(AuthorizationCode, (provider) => provider.beginAuthorization(state === undefined ? {} : { state }))
  const answerWith = (handler: MockHandler) => Effect.flatMap(MockHttpClient, (mock) => mock.setHandler(handler))

  it.effect("a second completion fails at once, without a request; concurrent completions make one exchange", () =>
    Effect.gen(function* () {
      const pending = yield* begin("fixed-state")
      const callback = "?code=c1&state=fixed-state"
      yield* complete(callback, pending)
      const again = yield* Effect.flip(complete(callback, pending))
      expect(again).toBeInstanceOf(AuthenticationError)
      expect(again.message).toContain("single-use")
      expect((again as AuthenticationError).payload?.error).toBe("invalid_grant")
      yield* expectTokenRequests(1)
      const racing = yield* begin()
      const outcomes = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.either(complete(`?code=c2&state=${racing.state}`, racing))),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter(Either.isRight)).toHaveLength(1)
      yield* expectTokenRequests(2)
      // a new sign-in with the same (caller-chosen) state is another pending sign-in
      const second = yield* begin("fixed-state")
      expect(value((yield* complete("?code=c3&state=fixed-state", second)).accessToken)).toBe("tok-3")
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "r" }))))
  )

  it.effect("a refusal of the token endpoint (invalid_grant) uses it up", () =>
    Effect.gen(function* () {
      const pending = yield* begin()
      const callback = `?code=c&state=${pending.state}`
      yield* answerWith(() => oauthError(400, "invalid_grant"))
      const refused = yield* Effect.flip(complete(callback, pending))
      expect((refused as AuthenticationError).status).toBe(400)
      yield* answerWith(numberedTokens({ refresh_token: "r" }))
      const retried = yield* Effect.flip(complete(callback, pending))
      expect(retried.message).toContain("single-use")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens())))
  )

  it.effect("after a 5xx or a transport failure the same callback can be completed again", () =>
    Effect.gen(function* () {
      const pending = yield* begin()
      const callback = `?code=c&state=${pending.state}`
      yield* answerWith(() => MockHttpClient.json({ error: "server_error" }, 503))
      const unavailable = yield* Effect.flip(complete(callback, pending))
      expect(unavailable._tag).toBe("TransportError")
      yield* answerWith(() => ({ transportError: "connection refused" }))
      const refused = yield* Effect.flip(complete(callback, pending))
      expect(refused._tag).toBe("TransportError")
      yield* answerWith(() => tokenResponse("tok-late", { refresh_token: "r" }))
      const token = yield* complete(callback, pending)
      expect(value(token.accessToken)).toBe("tok-late")
      expect(yield* getToken).toBe("tok-late")
      // now it is used up
      expect((yield* Effect.flip(complete(callback, pending))).message).toContain("single-use")
      yield* expectTokenRequests(3)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens(), { maxRetries: 0 })))
  )

  it.effect("a forged callback (another state) uses nothing up", () =>
    Effect.gen(function* () {
      const pending = yield* begin()
      const forged = yield* Effect.flip(complete("?code=evil&state=forged", pending))
      expect(forged.message).toContain("state mismatch")
      const token = yield* complete(`?code=c&state=${pending.state}`, pending)
      expect(value(token.accessToken)).toBe("tok-1")
      yield* expectTokenRequests(1)
    }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens({ refresh_token: "r" }))))
  )
})
