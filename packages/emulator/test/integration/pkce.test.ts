/**
 * PKCE and public clients: the SDK against the emulator over loopback.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import { inspect } from "node:util"
import { AuthorizationCode, authorizeLocal, ServiceClient, TokenCache, TokenProvider } from "@service-sdk/effect"
import { AsyncAuthorizationCode, tokenInfoToJson } from "@service-sdk/effect/promise"
import { Emulator } from "../../src/internal/effectApi.js"
import { cachedRefreshToken, freePort, HttpLive, REDIRECT_URI, statsSince, USER_SCOPES } from "./harness.js"
import { request } from "../utils.js"

const publicOptions = (emulator: Emulator.Service) => ({
  clientId: emulator.publicClientId,
  publicClient: true,
  authUrl: emulator.authUrl,
  redirectUri: REDIRECT_URI,
  scope: USER_SCOPES
})

/** Follows `/authorize` (autoApprove) and returns the URL it redirects to: the callback URL. */
const callbackUrl = (url: string) =>
  Effect.gen(function* () {
    const reply = yield* Effect.orDie(request(url))
    const location = reply.headers.get("location")
    if (reply.status !== 302 || location === null) return yield* Effect.die(`no redirect: ${reply.status}`)
    return location
  })

describe("PKCE and public clients against the emulator", () => {
  it.scopedLive(
    "a public client signs in with beginAuthorization/completeAuthorization and refreshes with rotation",
    () =>
      Effect.gen(function* () {
        const emulator = yield* Emulator.make({ autoApprove: true, rotateRefreshTokens: true })
        const since = yield* statsSince(emulator)
        const cache = yield* TokenCache.memory()
        const provider = yield* AuthorizationCode.make({ ...publicOptions(emulator), tokenCache: cache })
        const pending = yield* provider.beginAuthorization()
        expect(new URL(pending.url).searchParams.get("code_challenge_method")).toBe("S256")
        const token = yield* provider.completeAuthorization(yield* callbackUrl(pending.url), pending)
        const first = Redacted.value(token.refreshToken!)
        expect(yield* cachedRefreshToken(cache)).toBe(first)

        const client = yield* ServiceClient.make({ apiUrl: emulator.apiUrl }).pipe(
          Effect.provideService(TokenProvider, provider)
        )
        expect((yield* client.users.me).id).toBe("emulator-user")
        // a refresh as a public client: client_id in the body, the rotated refresh token replaces the old one
        const renewed = yield* provider.forceRefresh(token.accessToken)
        expect(Redacted.value(renewed)).not.toBe(Redacted.value(token.accessToken))
        const rotated = yield* cachedRefreshToken(cache)
        expect(rotated).toBeDefined()
        expect(rotated).not.toBe(first)
        expect((yield* client.users.me).id).toBe("emulator-user")
        expect(yield* since).toMatchObject({ token: 2, authorization_code: 1, refresh_token: 1, api: 2 })
      }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a wrong verifier is AuthenticationError invalid_grant and nothing is cached", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const cache = yield* TokenCache.memory()
      const provider = yield* AuthorizationCode.make({ ...publicOptions(emulator), tokenCache: cache })
      const pending = yield* provider.beginAuthorization()
      const other = yield* provider.beginAuthorization()
      const callback = yield* callbackUrl(pending.url)
      const error = yield* Effect.flip(
        provider.completeAuthorization(callback, { state: pending.state, codeVerifier: other.codeVerifier })
      )
      expect(error._tag).toBe("AuthenticationError")
      expect(error).toMatchObject({ status: 400, payload: { error: "invalid_grant" } })
      expect(Option.isNone(yield* cache.get)).toBe(true)
      expect((yield* Effect.flip(provider.getAccessToken))._tag).toBe("AuthenticationError")
      // the code was not used up by the failed attempt: the right verifier still works
      const token = yield* provider.completeAuthorization(callback, pending)
      expect(Option.isSome(yield* cache.get)).toBe(true)
      expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(token.accessToken))
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a code replayed with the right verifier is invalid_grant", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const provider = yield* AuthorizationCode.make(publicOptions(emulator))
      const pending = yield* provider.beginAuthorization()
      const callback = yield* callbackUrl(pending.url)
      yield* provider.completeAuthorization(callback, pending)
      const replay = yield* Effect.flip(provider.completeAuthorization(callback, pending))
      expect(replay).toMatchObject({ _tag: "AuthenticationError", payload: { error: "invalid_grant" } })
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a confidential client uses PKCE through beginAuthorization, also under requirePkce", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true, requirePkce: true })
      const provider = yield* AuthorizationCode.make({
        clientId: emulator.clientId,
        clientSecret: emulator.clientSecret,
        authUrl: emulator.authUrl,
        redirectUri: REDIRECT_URI
      })
      // without PKCE the emulator refuses to issue a code
      const refused = yield* callbackUrl(provider.getAuthorizationUrl({ state: "s" }))
      expect(new URL(refused).searchParams.get("error")).toBe("invalid_request")
      const pending = yield* provider.beginAuthorization()
      const token = yield* provider.completeAuthorization(yield* callbackUrl(pending.url), pending)
      // kept: the provider serves it without another request
      expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(token.accessToken))
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("authorizeLocal signs a public client in over its loopback server, with PKCE", () =>
    Effect.gen(function* () {
      const emulator = yield* Emulator.make({ autoApprove: true })
      const port = yield* freePort
      const provider = yield* AuthorizationCode.make({
        ...publicOptions(emulator),
        redirectUri: `http://127.0.0.1:${port}/callback`
      })
      const opened: Array<string> = []
      const token = yield* authorizeLocal({
        openBrowser: false,
        timeout: "10 seconds",
        onAuthorizationUrl: (url) => {
          opened.push(url)
          return Effect.promise(() => fetch(url).then((response) => response.text()))
        }
      }).pipe(Effect.provideService(AuthorizationCode, provider))
      expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(token.accessToken))
      expect(new URL(opened[0]!).searchParams.get("code_challenge_method")).toBe("S256")
    }).pipe(Effect.provide(HttpLive))
  )

  it.live("the Promise facade: beginAuthorization, completeAuthorization and exchangeCode with a verifier", () =>
    Effect.promise(async () => {
      await using emulator = await Emulator.start({ autoApprove: true })
      const provider = new AsyncAuthorizationCode({
        clientId: emulator.publicClientId,
        publicClient: true,
        authUrl: emulator.authUrl,
        redirectUri: REDIRECT_URI
      })
      try {
        expect(provider.publicClient).toBe(true)
        const pending = await provider.beginAuthorization({ scope: "user-read-private" })
        const location = (await fetch(pending.url, { redirect: "manual" })).headers.get("location")!
        const token = await provider.completeAuthorization(location, pending)
        expect(await provider.getAccessToken()).toBe(Redacted.value(token.accessToken))
        // exchangeCode without a verifier: a public client must use PKCE
        await expect(provider.exchangeCode("some-code")).rejects.toMatchObject({ _tag: "ConfigurationError" })
        const again = await provider.beginAuthorization()
        const code = AsyncAuthorizationCode.parseResponseUrl(
          (await fetch(again.url, { redirect: "manual" })).headers.get("location")!,
          { expectedState: again.state }
        )
        const exchanged = await provider.exchangeCode(code, { codeVerifier: again.codeVerifier })
        expect(await provider.getAccessToken()).toBe(tokenInfoToJson(exchanged).access_token)
      } finally {
        await provider.close()
      }
    })
  )
})

describe("canary: the verifier never reaches a log line, an error or a span", () => {
  it.scopedLive("sign-in, a wrong verifier, a replay, authorizeLocal", () => {
    const lines: Array<string> = []
    const errors: Array<unknown> = []
    const spans: Array<Tracer.Span> = []
    const verifiers = new Set<string>()
    const failing = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.tap(Effect.flip(effect), (error) => Effect.sync(() => errors.push(error)))
    return Effect.gen(function* () {
      const base = yield* Effect.tracer
      const recording = Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) => {
          const span = base.span(name, parent, context, links, startTime, kind, options)
          spans.push(span)
          return span
        },
        context: base.context
      })
      const run = Effect.gen(function* () {
        const emulator = yield* Emulator.make({ autoApprove: true })
        const provider = yield* AuthorizationCode.make({ ...publicOptions(emulator), maxRetries: 0 })
        const pending = yield* provider.beginAuthorization()
        const wrong = yield* provider.beginAuthorization()
        verifiers.add(Redacted.value(pending.codeVerifier)).add(Redacted.value(wrong.codeVerifier))
        const callback = yield* callbackUrl(pending.url)
        yield* failing(
          provider.completeAuthorization(callback, { state: pending.state, codeVerifier: wrong.codeVerifier })
        )
        yield* provider.completeAuthorization(callback, pending)
        yield* failing(provider.completeAuthorization(callback, pending))
        yield* failing(provider.exchangeCode("code", { codeVerifier: "too-short-verifier-canary" }))
        verifiers.add("too-short-verifier-canary")
        const port = yield* freePort
        const local = yield* AuthorizationCode.make({
          ...publicOptions(emulator),
          redirectUri: `http://127.0.0.1:${port}/callback`
        })
        yield* authorizeLocal({
          openBrowser: false,
          timeout: "10 seconds",
          onAuthorizationUrl: (url) => Effect.promise(() => fetch(url).then((response) => response.text()))
        }).pipe(Effect.provideService(AuthorizationCode, local))
      })
      yield* run.pipe(Effect.withTracer(recording))

      expect(errors).toHaveLength(3)
      expect(lines.some((line) => line.includes("code exchanged"))).toBe(true)
      expect(spans.some((span) => span.name === "AuthorizationCode.completeAuthorization")).toBe(true)
      const texts = [
        ...lines,
        ...errors.flatMap((error) => [
          String(error),
          JSON.stringify(error),
          inspect(error, { depth: 10 }),
          Cause.pretty(Cause.fail(error), { renderErrorCause: true })
        ]),
        ...spans.flatMap((span) => [span.name, ...[...span.attributes.values()].map((value) => inspect(value))])
      ]
      for (const verifier of verifiers) {
        expect(texts.filter((text) => text.includes(verifier))).toEqual([])
      }
    }).pipe(
      Effect.provide(HttpLive),
      Effect.provide(
        Logger.replace(
          Logger.defaultLogger,
          Logger.make((options) => {
            lines.push(Logger.logfmtLogger.log(options))
            if (!Cause.isEmpty(options.cause)) lines.push(Cause.pretty(options.cause, { renderErrorCause: true }))
          })
        )
      ),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
  })
})
