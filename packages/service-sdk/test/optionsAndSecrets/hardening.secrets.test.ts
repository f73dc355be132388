/**
 * Issue 10, point 3: a server that echoes the request back never puts a known secret into an error, a log line or
 * a span (attributes, events or `Exit`), and URL credentials never reach a message.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted, Tracer } from "effect"
import { AuthorizationCode, ClientCredentials, ServiceClient, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient, type MockHandler, type RecordedRequest } from "@service-sdk/effect/testing"
import * as util from "node:util"
import { clientAuthorization } from "../../src/internal/tokenEndpoint.js"
import { maskSecrets, maskUrlCredentials } from "@service-sdk/shared/redact"
import { assertNoCanary, makeLeakRecorder, strings } from "../support/leaks.js"

const AUTH_URL = "http://127.0.0.1:4010"
const API_URL = "http://127.0.0.1:4020/v1"
const REDIRECT_URI = "http://127.0.0.1:4011/callback"
const CLIENT_ID = "canary-client"
const SECRET = "canary-secret 7f3a+/="
const ACCESS = "canary-access-91b2"
const REFRESH = "canary-refresh-c4d8"
const CODE = "canary-code-e5f6"
const VERIFIER = "canary-verifier-0123456789abcdefghijklmnopqrstuvwxyz"
const BASIC = clientAuthorization(CLIENT_ID, Redacted.make(SECRET))
const BASIC_CREDENTIAL = BASIC.slice("Basic ".length)
const FORM_SECRET = new URLSearchParams({ v: SECRET }).toString().slice(2)
const CANARIES = [SECRET, FORM_SECRET, encodeURIComponent(SECRET), BASIC_CREDENTIAL, ACCESS, REFRESH, CODE, VERIFIER]

/** Every string reachable from `value` through own properties (no getters run), bounded. */
/** A tracer keeping every span: its attributes, events and `Exit`, rendered and walked. */
const makeRecordingTracer = () => {
  const texts: Array<string> = []
  const names: Array<string> = []
  let ids = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, _startTime, kind) => {
      names.push(name)
      const attributes = new Map<string, unknown>()
      const events: Array<unknown> = []
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span-${++ids}`,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime: 0n },
        attributes,
        links,
        sampled: true,
        kind,
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: (eventName, _time, eventAttributes) => {
          events.push({ eventName, eventAttributes })
        },
        addLinks: () => {},
        end: (_endTime, exit) => {
          const record = { name, attributes, events, exit }
          texts.push(util.inspect(record, { depth: Infinity, showHidden: true }), ...strings(record))
          if (Exit.isFailure(exit)) texts.push(Cause.pretty(exit.cause))
        }
      }
      return span
    },
    context: (f) => f()
  })
  return { tracer, texts, names }
}

/** Text that reflects everything the request carried, in the forms servers use. */
const echo = (request: RecordedRequest) =>
  `you sent ${request.headers.authorization ?? ""} with ${request.body} (${decodeURIComponent(request.body)}) ${
    request.form.get("client_secret") ?? ""
  }`

describe("a server echoing the request never leaks a secret", () => {
  it.scoped("token endpoint errors, logs and spans (code + verifier, refresh, client credentials)", () => {
    const tracing = makeRecordingTracer()
    const recorder = makeLeakRecorder(CANARIES)
    let call = 0
    const handler: MockHandler = (request) => {
      call++
      if (call === 1) {
        return MockHttpClient.json({
          access_token: ACCESS,
          token_type: "Bearer",
          expires_in: 1,
          refresh_token: REFRESH
        })
      }
      return MockHttpClient.json({ error: "invalid_grant", error_description: echo(request) }, 400)
    }
    const layer = AuthorizationCode.layer({
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      authUrl: AUTH_URL,
      redirectUri: REDIRECT_URI,
      maxRetries: 0,
      skew: 0
    }).pipe(Layer.provideMerge(MockHttpClient.layer(handler)))
    return Effect.gen(function* () {
      const ac = yield* AuthorizationCode
      const first = yield* recorder.observe(ac.exchangeCode(CODE, { codeVerifier: VERIFIER }))
      expect(Exit.isSuccess(first)).toBe(true)
      // a forced refresh the server answers with an echo of the refresh token and the Basic credential
      const refreshed = yield* recorder.observe(ac.forceRefresh(Redacted.make(ACCESS)))
      expect(Exit.isFailure(refreshed)).toBe(true)
      const again = yield* recorder.observe(ac.exchangeCode(CODE, { codeVerifier: VERIFIER }))
      expect(Exit.isFailure(again)).toBe(true)
      const error = Option.getOrThrow(Exit.isFailure(again) ? Cause.failureOption(again.cause) : Option.none<never>())
      expect(error.message).toContain("[redacted]")
      expect(error.message).toContain("invalid_grant")
      const cc = yield* recorder.observe(
        ClientCredentials.make({ clientId: CLIENT_ID, clientSecret: SECRET, authUrl: AUTH_URL, maxRetries: 0 }).pipe(
          Effect.flatMap((provider) => provider.getAccessToken)
        )
      )
      expect(Exit.isFailure(cc)).toBe(true)
    }).pipe(
      recorder.captureLogs,
      Effect.provide(layer),
      Effect.withTracer(tracing.tracer),
      Effect.withTracerEnabled(true),
      (self) => {
        return Effect.tap(self, () =>
          Effect.sync(() => {
            expect(tracing.names.some((name) => name.startsWith("http.client"))).toBe(true)
            assertNoCanary(tracing.texts, CANARIES, "spans")
            recorder.assertClean()
          })
        )
      }
    )
  })

  it.scoped("a transport failure whose description echoes the request never shows its secrets", () => {
    const tracing = makeRecordingTracer()
    const recorder = makeLeakRecorder(CANARIES)
    // a client (or proxy) error that quotes what it was sending, in the forms servers use
    const handler: MockHandler = (request) => ({ transportError: `socket hang up while sending ${echo(request)}` })
    const layer = AuthorizationCode.layer({
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      authUrl: AUTH_URL,
      redirectUri: REDIRECT_URI,
      maxRetries: 0
    }).pipe(Layer.provideMerge(MockHttpClient.layer(handler)))
    return Effect.gen(function* () {
      const ac = yield* AuthorizationCode
      const exit = yield* recorder.observe(ac.exchangeCode(CODE, { codeVerifier: VERIFIER }))
      const error = Option.getOrThrow(Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none<never>())
      expect(error._tag).toBe("TransportError")
      expect(error.message).toContain("cannot reach the token endpoint")
      expect(error.message).toContain("[redacted]")
      // the message and the cause that stands in for the client's error
      assertNoCanary([error.message, ...strings(error), String(error.cause)], CANARIES, "the TransportError")
      // a data request: the bearer token it was sending
      const client = yield* ServiceClient.make({ apiUrl: API_URL, maxRetries: 0 }).pipe(
        Effect.provideService(TokenProvider, TokenProvider.static(ACCESS))
      )
      const data = yield* recorder.observe(client.request("GET", "/me"))
      const dataError = Option.getOrThrow(Exit.isFailure(data) ? Cause.failureOption(data.cause) : Option.none<never>())
      expect(dataError.message).toContain("cannot reach the API")
      expect(dataError.message).toContain("[redacted]")
      assertNoCanary(
        [dataError.message, ...strings(dataError), String(dataError.cause)],
        CANARIES,
        "the TransportError"
      )
      recorder.assertClean()
      // the http.client spans end with the failure: it is masked there too
      expect(tracing.names.filter((name) => name.startsWith("http.client")).length).toBeGreaterThan(1)
      assertNoCanary(tracing.texts, CANARIES, "spans")
    }).pipe(
      recorder.captureLogs,
      Effect.provide(layer),
      Effect.withTracer(tracing.tracer),
      Effect.withTracerEnabled(true)
    )
  })

  it.effect("API errors (400 and 401 after the forced refresh) and their spans never show the bearer tokens", () => {
    const tracing = makeRecordingTracer()
    const recorder = makeLeakRecorder(CANARIES)
    let tokens = 0
    const handler: MockHandler = (request) => {
      if (request.url.href === `${AUTH_URL}/api/token`) {
        tokens++
        return MockHttpClient.json({ access_token: `${ACCESS}-${tokens}`, token_type: "Bearer", expires_in: 3600 })
      }
      const status = request.url.pathname.endsWith("/me") ? 401 : 400
      return MockHttpClient.json({ error: { status, message: `rejected ${echo(request)}` } }, status)
    }
    const layer = ServiceClient.layer({ apiUrl: API_URL, maxRetries: 0 }).pipe(
      Layer.provide(
        ClientCredentials.layer({ clientId: CLIENT_ID, clientSecret: SECRET, authUrl: AUTH_URL, maxRetries: 0 })
      ),
      Layer.provide(MockHttpClient.layer(handler))
    )
    return Effect.gen(function* () {
      const client = yield* ServiceClient
      const bad = yield* recorder.observe(client.albums.get("x"))
      const unauthorized = yield* recorder.observe(client.users.me)
      expect(Exit.isFailure(bad) && Exit.isFailure(unauthorized)).toBe(true)
      const error = Option.getOrThrow(Exit.isFailure(bad) ? Cause.failureOption(bad.cause) : Option.none<never>())
      expect(error.message, error.message).toContain("[redacted]")
      expect(tokens).toBe(2)
    }).pipe(
      recorder.captureLogs,
      Effect.provide(layer),
      Effect.withTracer(tracing.tracer),
      Effect.tap(() =>
        Effect.sync(() => {
          expect(tracing.names.filter((name) => name.startsWith("http.client")).length).toBeGreaterThan(2)
          assertNoCanary(tracing.texts, CANARIES, "spans")
          recorder.assertClean()
        })
      )
    )
  })

  it("maskSecrets covers plain, form-, percent-, JSON- and base64-encoded forms; URL credentials are masked", () => {
    const text = `a ${SECRET} b ${FORM_SECRET} c ${encodeURIComponent(SECRET)} d ${JSON.stringify(SECRET)} e ${Buffer.from(SECRET).toString("base64")}`
    const masked = maskSecrets(text, [SECRET])
    for (const canary of [SECRET, FORM_SECRET, encodeURIComponent(SECRET), Buffer.from(SECRET).toString("base64")]) {
      expect(masked).not.toContain(canary)
    }
    expect(masked.startsWith("a [redacted] b [redacted]")).toBe(true)
    expect(maskSecrets("no ab here", ["ab"])).toBe("no ab here")
    expect(maskUrlCredentials('bad "https://user:pa55@host/x" and http://h/')).toBe(
      'bad "https://[redacted]@host/x" and http://h/'
    )
  })

  it.scoped("bad authUrl and redirectUri messages never echo user:password@", () =>
    Effect.gen(function* () {
      const http = MockHttpClient.layer(() => MockHttpClient.json({}))
      const auth = yield* Effect.flip(
        ClientCredentials.make({ clientId: "a", clientSecret: "b", authUrl: "http://user:pa55word@bad host" }).pipe(
          Effect.provide(http)
        )
      )
      expect(auth._tag).toBe("ConfigurationError")
      expect(auth.message).not.toContain("pa55word")
      const redirect = yield* Effect.flip(
        AuthorizationCode.make({
          clientId: "a",
          clientSecret: "b",
          authUrl: AUTH_URL,
          redirectUri: "http://user:pa55word@bad host/cb"
        }).pipe(Effect.provide(http))
      )
      expect(redirect._tag).toBe("ConfigurationError")
      expect(redirect.message).not.toContain("pa55word")
    })
  )
})
