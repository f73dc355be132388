import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, TestClock } from "effect"
import { AuthorizationCode, ClientCredentials, TokenCache, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient, type MockResponse } from "@service-sdk/effect/testing"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { AUTH_URL, REDIRECT_URI, requests, tokenInfo } from "../fixtures.js"
import { makeLeakRecorder } from "../support/leaks.js"

const CANARY_SECRET = "canary-secret-7f3a"
const CANARY_ACCESS = "canary-access-91b2"
const CANARY_REFRESH = "canary-refresh-c4d8"
const CANARY_CODE = "canary-code-e5f6"
const CANARIES = [CANARY_SECRET, CANARY_ACCESS, CANARY_REFRESH, CANARY_CODE]

const canaryOptions = { clientId: "canary-client", clientSecret: CANARY_SECRET, authUrl: AUTH_URL, maxRetries: 1 }

const canaryToken = (extra: Readonly<Record<string, unknown>> = {}): MockResponse =>
  MockHttpClient.json({ access_token: CANARY_ACCESS, token_type: "Bearer", expires_in: 3600, ...extra })

describe("no secret, token or code escapes", () => {
  it.effect("client credentials: success, rejection, transport errors, timeouts and malformed bodies", () => {
    const recorder = makeLeakRecorder(CANARIES)
    const failures: ReadonlyArray<MockResponse | Effect.Effect<MockResponse>> = [
      MockHttpClient.json({ error: "invalid_client", error_description: "Bad client" }, 401),
      { transportError: "connect ECONNREFUSED 127.0.0.1:4010" },
      { status: 503, body: `upstream said ${CANARY_ACCESS}` },
      Effect.never,
      { status: 200, headers: { "content-type": "text/html" }, body: `<p>${CANARY_ACCESS}</p>` },
      { status: 200, body: `{"access_token":"${CANARY_ACCESS}","expires_in":` },
      MockHttpClient.json({ access_token: CANARY_ACCESS, expires_in: -1, refresh_token: CANARY_REFRESH }),
      MockHttpClient.json({ access_token: CANARY_ACCESS, expires_in: "soon" }),
      MockHttpClient.json({ access_token: CANARY_ACCESS, expires_in: 60, token_type: CANARY_ACCESS })
    ]
    return Effect.gen(function* () {
      const provider = yield* TokenProvider
      const mock = yield* MockHttpClient
      const first = yield* recorder.observe(provider.getAccessToken)
      expect(Exit.isSuccess(first)).toBe(true)
      yield* recorder.observe(provider.forceRefresh(Exit.isSuccess(first) ? first.value : (undefined as never)))
      for (const failure of failures) {
        yield* mock.setHandler(() => failure)
        yield* TestClock.adjust("2 hours")
        const fiber = yield* Effect.fork(recorder.observe(provider.getAccessToken))
        yield* TestClock.adjust("5 minutes")
        const exit = yield* fiber.await
        expect(Exit.isSuccess(exit) && Exit.isFailure(exit.value)).toBe(true)
      }
      const sent = yield* requests
      expect(Buffer.from(sent[0]!.headers.authorization!.slice(6), "base64").toString()).toContain(CANARY_SECRET)
      recorder.assertClean()
      expect(recorder.texts.some((text) => text.includes("token refreshed"))).toBe(true)
    }).pipe(
      Effect.provide(
        ClientCredentials.layer({ ...canaryOptions, timeout: "1 second" }).pipe(
          Layer.provideMerge(MockHttpClient.layer(() => canaryToken()))
        )
      ),
      recorder.captureLogs
    )
  })

  it.effect("authorization code: exchange, refresh, rejections and callback URLs", () => {
    const recorder = makeLeakRecorder(CANARIES)
    return Effect.gen(function* () {
      const provider = yield* AuthorizationCode
      const mock = yield* MockHttpClient
      const code = yield* recorder.observe(
        AuthorizationCode.parseResponseUrl(`${REDIRECT_URI}?code=${CANARY_CODE}&state=s`, { expectedState: "s" })
      )
      expect(code).toEqual(Exit.succeed(CANARY_CODE))
      for (const url of [
        `${REDIRECT_URI}?code=${CANARY_CODE}&state=wrong`,
        `${REDIRECT_URI}?code=${CANARY_CODE}`,
        `${REDIRECT_URI}?state=${CANARY_CODE}`
      ]) {
        yield* recorder.observe(AuthorizationCode.parseResponseUrl(url, { expectedState: "s" }))
      }

      // a code exchange whose response lacks refresh_token, and one that is rejected
      yield* mock.setHandler(() => canaryToken())
      yield* recorder.observe(provider.exchangeCode(CANARY_CODE))
      yield* mock.setHandler(() =>
        MockHttpClient.json({ error: "invalid_grant", error_description: "Invalid code" }, 400)
      )
      yield* recorder.observe(provider.exchangeCode(CANARY_CODE))

      // a good exchange, then refreshes: rejected, malformed, broken, and good
      yield* mock.setHandler(() => canaryToken({ refresh_token: CANARY_REFRESH }))
      const exchanged = yield* recorder.observe(provider.exchangeCode(` ${CANARY_CODE} `))
      expect(Exit.isSuccess(exchanged)).toBe(true)
      for (const answer of [
        MockHttpClient.json({ error: "invalid_grant", error_description: "Refresh token revoked" }, 400),
        { status: 200, body: `<html>${CANARY_ACCESS} ${CANARY_REFRESH}</html>` },
        MockHttpClient.json({ access_token: CANARY_ACCESS, refresh_token: CANARY_REFRESH }),
        { transportError: "socket hang up" },
        canaryToken({ refresh_token: CANARY_REFRESH })
      ] satisfies ReadonlyArray<MockResponse>) {
        yield* mock.setHandler(() => answer)
        yield* TestClock.adjust("2 hours")
        const fiber = yield* Effect.fork(recorder.observe(provider.getAccessToken))
        yield* TestClock.adjust("1 minute")
        yield* fiber.await
      }
      const sent = yield* requests
      expect(sent.some((request) => request.form.get("code") === CANARY_CODE)).toBe(true)
      expect(sent.some((request) => request.form.get("refresh_token") === CANARY_REFRESH)).toBe(true)
      recorder.assertClean()
    }).pipe(
      Effect.provide(
        AuthorizationCode.layer({ ...canaryOptions, redirectUri: REDIRECT_URI }).pipe(
          Layer.provideMerge(MockHttpClient.layer(() => canaryToken()))
        )
      ),
      recorder.captureLogs
    )
  })

  it.scoped("a failing file cache names the file, never the token", () => {
    const recorder = makeLeakRecorder(CANARIES)
    return Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "service-sdk-redact-"))),
        (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
      )
      yield* Effect.promise(() => fs.writeFile(path.join(dir, "blocker"), ""))
      const cache = yield* TokenCache.file(path.join(dir, "blocker", "token.json"))
      const exit = yield* recorder.observe(cache.set(tokenInfo(CANARY_ACCESS, 100, { refreshToken: CANARY_REFRESH })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(Option.isNone(yield* cache.get)).toBe(true)
      recorder.assertClean()
    }).pipe(Effect.provide(NodeFileSystem.layer), recorder.captureLogs)
  })
})
