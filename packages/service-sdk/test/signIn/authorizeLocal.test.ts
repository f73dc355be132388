import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  ConfigProvider,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  Option,
  Redacted,
  Ref,
  TestClock
} from "effect"
import * as Net from "node:net"
import { afterEach, vi } from "vitest"
import {
  AuthenticationError,
  AuthorizationCode,
  type AuthorizeLocalOptions,
  authorizeLocal,
  ConfigurationError,
  TokenProvider,
  TransportError
} from "@service-sdk/effect"
import { type MockHandler, MockHttpClient, type MockResponse } from "@service-sdk/effect/testing"
import { browserCommand } from "@service-sdk/shared/browserCommand"
import { BrowserOpener, BrowserOpenError } from "../../src/internal/local/browser.js"
import { escapeHtml, failurePage, successPage } from "@service-sdk/shared/loopbackPages"
import { parseLoopbackRedirect } from "../../src/internal/local/redirectUri.js"
import { randomState, STATE_BYTES } from "@service-sdk/shared/pkce"

// ---------------------------------------------------------------------------------------------------------------------
// Helpers: real loopback sockets, a mock token endpoint, and a browser stand-in.

/** A port nobody listens on right now: bind 127.0.0.1:0, read the port, close. */
const freePort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const server = Net.createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as Net.AddressInfo
        server.close(() => resolve(port))
      })
    })
)

/** Whether `port` can be bound now (i.e. nothing holds it). */
const canBind = (port: number, host = "127.0.0.1") =>
  Effect.promise(
    () =>
      new Promise<boolean>((resolve) => {
        const server = Net.createServer()
        server.once("error", () => resolve(false))
        server.listen(port, host, () => server.close(() => resolve(true)))
      })
  )

/** A node:net server holding a port on 127.0.0.1 for the scope. */
const occupyPort = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<Net.Server>((resolve, reject) => {
        const server = Net.createServer((socket) => socket.destroy())
        server.once("error", reject)
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
  ),
  (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
).pipe(Effect.map((server) => (server.address() as Net.AddressInfo).port))

interface Fetched {
  readonly status: number
  readonly body: string
  readonly headers: Headers
}

const get = (url: string, init: RequestInit = {}): Effect.Effect<Fetched, Error> =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, { redirect: "manual", ...init })
      return { status: response.status, body: await response.text(), headers: response.headers }
    },
    catch: (error) => error as Error
  })

const tokenResponse = (accessToken = "access-1"): MockResponse =>
  MockHttpClient.json({
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: 3600,
    refresh_token: "refresh-1",
    scope: "user-read-private"
  })

const providerLayer = (redirectUri: string | undefined, handler: MockHandler = () => tokenResponse(), extra = {}) =>
  AuthorizationCode.layer({
    clientId: "client-id",
    clientSecret: "client-secret",
    authUrl: "http://auth.test",
    ...(redirectUri !== undefined ? { redirectUri } : {}),
    ...extra
  }).pipe(Layer.provideMerge(MockHttpClient.layer(handler)))

/** No environment: SERVICE_SDK_* of the machine running the tests must not leak in. */
const noEnv = Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))

/** Runs `effect` against a provider with `redirectUri`, a mock token endpoint and a recording browser stand-in. */
const withProvider = <A, E>(
  redirectUri: string | undefined,
  effect: Effect.Effect<A, E, AuthorizationCode | TokenProvider | MockHttpClient>,
  handler?: MockHandler,
  extra = {}
) => effect.pipe(Effect.provide(providerLayer(redirectUri, handler, extra)), Effect.provide(noEnv))

const browserCalls = Effect.gen(function* () {
  const calls = yield* Ref.make<ReadonlyArray<string>>([])
  const opener = (url: string) => Ref.update(calls, (all) => [...all, url])
  return { calls, opener }
})

/**
 * Starts `authorizeLocal` in a fiber with `openBrowser: false` and returns the fiber and the authorization URL it
 * announced (failing if the flow ended before announcing).
 */
const start = (options: AuthorizeLocalOptions = {}) =>
  Effect.gen(function* () {
    const announced = yield* Deferred.make<string>()
    const fiber = yield* Effect.fork(
      authorizeLocal({
        openBrowser: false,
        ...options,
        onAuthorizationUrl: (url) =>
          Effect.zipRight(
            Effect.suspend(() => options.onAuthorizationUrl?.(url) ?? Effect.void),
            Deferred.succeed(announced, url)
          )
      })
    )
    const url = yield* Effect.raceFirst(
      Deferred.await(announced),
      Effect.flatMap(Fiber.await(fiber), (exit) => Effect.dieMessage(`ended before announcing: ${String(exit)}`))
    )
    const parsed = new URL(url)
    return { fiber, url: parsed, state: parsed.searchParams.get("state") ?? "" }
  })

const callbackUrl = (port: number, params: Record<string, string>, path = "/callback") =>
  `http://127.0.0.1:${port}${path}?${new URLSearchParams(params).toString()}`

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

afterEach(() => {
  vi.restoreAllMocks()
})

// ---------------------------------------------------------------------------------------------------------------------

describe("authorizeLocal: validation (nothing is bound)", () => {
  it.live("a missing redirectUri is a ConfigurationError naming the option and the variable", () =>
    withProvider(
      undefined,
      Effect.gen(function* () {
        const error = yield* Effect.flip(authorizeLocal({ openBrowser: false, onAuthorizationUrl: () => {} }))
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.message).toContain("redirectUri")
        expect(error.message).toContain("SERVICE_SDK_REDIRECT_URI")
      })
    )
  )

  // the Service's rules are checked when the provider is made (a plain-http non-loopback host, localhost, a
  // fragment), authorizeLocal's own (http, a usable port) when it starts: either way before anything runs
  const rejected: ReadonlyArray<readonly [string, string, string]> = [
    ["https", "https://127.0.0.1:{port}/callback", "http"],
    ["a private-network host", "http://10.0.0.1:{port}/callback", "10.0.0.1"],
    ["a public host name", "http://example.com:{port}/callback", "example.com"],
    ["localhost", "http://localhost:{port}/callback", "http://127.0.0.1:{port}/callback"],
    ["port 0", "http://127.0.0.1:0/callback", "port"],
    ["a fragment", "http://127.0.0.1:{port}/callback#frag", "fragment"]
  ]
  for (const [what, template, mentions] of rejected) {
    it.live(`a redirectUri with ${what} is a ConfigurationError before anything runs`, () =>
      Effect.gen(function* () {
        const port = yield* freePort
        const announced = yield* Ref.make(0)
        const browser = yield* browserCalls
        const error = yield* Effect.flip(
          withProvider(
            template.replace("{port}", String(port)),
            authorizeLocal({ onAuthorizationUrl: () => Ref.update(announced, (n) => n + 1) })
          )
        ).pipe(Effect.provideService(BrowserOpener, browser.opener))
        expect(error).toBeInstanceOf(ConfigurationError)
        expect(error.message).toContain(mentions.replace("{port}", String(port)))
        expect(yield* Ref.get(announced)).toBe(0)
        expect(yield* Ref.get(browser.calls)).toEqual([])
        expect(yield* canBind(port)).toBe(true)
      })
    )
  }

  it.live("openBrowser: false without onAuthorizationUrl is a ConfigurationError, and binds nothing", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const error = yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.flip(authorizeLocal({ openBrowser: false }))
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain("onAuthorizationUrl")
      expect(yield* canBind(port)).toBe(true)
    })
  )

  it.live("a port in use is a ConfigurationError that names the port, and announces nothing", () =>
    Effect.gen(function* () {
      const port = yield* occupyPort
      const announced = yield* Ref.make(0)
      const error = yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.flip(
          authorizeLocal({ openBrowser: false, onAuthorizationUrl: () => Ref.update(announced, (n) => n + 1) })
        )
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toContain(String(port))
      expect(error.message).toContain("in use")
      expect(yield* Ref.get(announced)).toBe(0)
    }).pipe(Effect.scoped)
  )

  it.effect("parseLoopbackRedirect: hosts, ports and paths", () =>
    Effect.gen(function* () {
      const v4 = yield* parseLoopbackRedirect("http://127.0.0.1:8080/cb/x?app=1")
      expect(v4).toMatchObject({ port: 8080, path: "/cb/x", addresses: [{ host: "127.0.0.1", required: true }] })
      // the canonical form only (DESIGN section 9): an explicit default port is another spelling of no port
      const defaultPort = yield* Effect.flip(parseLoopbackRedirect("http://127.0.0.1:80/cb"))
      expect(defaultPort.message).toContain("canonical form http://127.0.0.1/cb")
      expect((yield* parseLoopbackRedirect("http://[::1]:9000/")).addresses).toEqual([{ host: "::1", required: true }])
      expect((yield* parseLoopbackRedirect("http://[::1]:9000/")).path).toBe("/")
      // localhost is refused (the Service's rule), with the fix named
      const localhost = yield* Effect.flip(parseLoopbackRedirect("http://localhost:9000/cb"))
      expect(localhost.message).toContain("use http://127.0.0.1:9000/cb")
      // no port: an ephemeral one per sign-in
      const ephemeral = yield* parseLoopbackRedirect("http://127.0.0.1/cb?app=1")
      expect(ephemeral.port).toBe(0)
      expect(ephemeral.uriFor(43210)).toBe("http://127.0.0.1:43210/cb?app=1")
      const invalid = yield* Effect.flip(parseLoopbackRedirect("not a url"))
      expect(invalid).toBeInstanceOf(ConfigurationError)
    })
  )
})

describe("authorizeLocal: state and pages", () => {
  it.effect("generated states are random base64url of at least 128 bits, never repeating", () =>
    Effect.gen(function* () {
      const states = yield* Effect.all(Array.from({ length: 200 }, () => Effect.sync(randomState)))
      expect(new Set(states).size).toBe(200)
      for (const state of states) {
        expect(state).toMatch(/^[A-Za-z0-9_-]+$/)
        expect(Buffer.from(state, "base64url").length).toBe(STATE_BYTES)
      }
      expect(STATE_BYTES * 8).toBeGreaterThanOrEqual(128)
    })
  )

  it("escapes HTML in failure pages", () => {
    expect(escapeHtml(`<script>alert("x") & 'y'</script>`)).toBe(
      "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
    )
    const page = failurePage({ error: "<script>alert(1)</script>", description: "<img src=x onerror=alert(2)>" })
    expect(page.status).toBe(400)
    expect(page.html).not.toContain("<script>alert")
    expect(page.html).not.toContain("<img")
    expect(page.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(page.html).toContain("Authorization failed")
  })

  it("the success page says the window can be closed", () => {
    const page = successPage()
    expect(page.status).toBe(200)
    expect(page.html).toContain("Authorization complete")
    expect(page.html).toContain("close this window")
    expect(page.html).not.toMatch(/<script|https?:\/\//)
  })

  it("browser commands never go through a shell", () => {
    const url = "http://auth.test/authorize?a=1&b=%20x"
    expect(browserCommand("linux", url)).toEqual({ command: "xdg-open", args: [url] })
    expect(browserCommand("darwin", url)).toEqual({ command: "open", args: [url] })
    expect(browserCommand("win32", url)).toEqual({ command: "rundll32", args: ["url.dll,FileProtocolHandler", url] })
  })
})

describe("authorizeLocal: the loopback flow", () => {
  it.live("announces the URL, receives the callback, exchanges the code and returns the tokens", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const redirectUri = `http://127.0.0.1:${port}/callback`
      yield* withProvider(
        redirectUri,
        Effect.gen(function* () {
          const { fiber, url, state } = yield* start({
            scope: ["user-read-private", "user-read-email"],
            showDialog: true
          })
          expect(url.origin + url.pathname).toBe("http://auth.test/authorize")
          expect(url.searchParams.get("response_type")).toBe("code")
          expect(url.searchParams.get("client_id")).toBe("client-id")
          expect(url.searchParams.get("redirect_uri")).toBe(redirectUri)
          expect(url.searchParams.get("scope")).toBe("user-read-private user-read-email")
          expect(url.searchParams.get("show_dialog")).toBe("true")
          expect(state.length).toBeGreaterThanOrEqual(22)

          const page = yield* get(callbackUrl(port, { code: "the-code", state }))
          expect(page.status).toBe(200)
          expect(page.headers.get("content-type")).toContain("text/html")
          expect(page.headers.get("cache-control")).toBe("no-store")
          expect(page.body).toContain("Authorization complete")

          const token = yield* Fiber.join(fiber)
          expect(Redacted.value(token.accessToken)).toBe("access-1")
          expect(token.refreshToken && Redacted.value(token.refreshToken)).toBe("refresh-1")

          const requests = yield* (yield* MockHttpClient).requests
          expect(requests).toHaveLength(1)
          expect(requests[0]!.url.href).toBe("http://auth.test/api/token")
          expect(requests[0]!.form.get("grant_type")).toBe("authorization_code")
          expect(requests[0]!.form.get("code")).toBe("the-code")
          expect(requests[0]!.form.get("redirect_uri")).toBe(redirectUri)

          // The provider cached the tokens: no further request.
          expect(Redacted.value(yield* (yield* TokenProvider).getAccessToken)).toBe("access-1")
          expect(yield* (yield* MockHttpClient).requests).toHaveLength(1)
          // The server is gone.
          expect(yield* canBind(port)).toBe(true)
        })
      )
    })
  )

  it.live("generates a different state each run, and uses a given one as is", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const states: Array<string> = []
          for (let i = 0; i < 2; i++) {
            const { fiber, state } = yield* start()
            states.push(state)
            yield* Fiber.interrupt(fiber)
          }
          expect(states[0]).not.toBe(states[1])
          for (const state of states) expect(Buffer.from(state, "base64url").length).toBeGreaterThanOrEqual(16)

          const given = yield* start({ state: "my-own-state" })
          expect(given.state).toBe("my-own-state")
          expect((yield* get(callbackUrl(port, { code: "c", state: "my-own-state" }))).status).toBe(200)
          yield* Fiber.join(given.fiber)
        })
      )
    })
  )

  it.live("error=access_denied: a 400 page naming it, and AuthenticationError with the payload", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const page = yield* get(
            callbackUrl(port, { error: "access_denied", error_description: "The user said <no>", state })
          )
          expect(page.status).toBe(400)
          expect(page.body).toContain("access_denied")
          expect(page.body).toContain("The user said &lt;no&gt;")
          const error = failureOf(yield* Fiber.await(fiber))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect((error as AuthenticationError).payload).toEqual({
            error: "access_denied",
            error_description: "The user said <no>"
          })
          expect(yield* (yield* MockHttpClient).requests).toHaveLength(0)
          expect(yield* canBind(port)).toBe(true)
        })
      )
    })
  )

  it.live("an error parameter with markup is escaped on the page", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const page = yield* get(callbackUrl(port, { error: "<script>alert(1)</script>", state }))
          expect(page.status).toBe(400)
          expect(page.body).not.toContain("<script>")
          expect(page.body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
          expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
          expect(failureOf(yield* Fiber.await(fiber))).toBeInstanceOf(AuthenticationError)
        })
      )
    })
  )

  it.live("a wrong or missing state: 400 page naming the state, ignored (no exchange), the flow keeps waiting", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const forged = [
            { code: "stolen-code", state: "forged-state" },
            { code: "stolen-code" },
            { error: "access_denied", error_description: "\u001b[2Jpwned", state: "forged-state" },
            { error: "access_denied" }
          ]
          for (const params of forged) {
            const page = yield* get(callbackUrl(port, params))
            expect(page.status).toBe(400)
            expect(page.body).toContain("state")
            for (const secret of [state, "forged-state", "stolen-code"]) expect(page.body).not.toContain(secret)
          }
          expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
          expect(yield* (yield* MockHttpClient).requests).toHaveLength(0)
          expect((yield* get(callbackUrl(port, { code: "the-code", state }))).status).toBe(200)
          yield* Fiber.join(fiber)
        })
      )
    })
  )

  it.live("a callback without a code: 400 page and AuthenticationError", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const page = yield* get(callbackUrl(port, { state }))
          expect(page.status).toBe(400)
          const error = failureOf(yield* Fiber.await(fiber))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect(error.message).toContain("no code")
        })
      )
    })
  )

  it.live("other paths get 404 and non-GET methods 405, while the flow keeps waiting", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          expect((yield* get(`http://127.0.0.1:${port}/favicon.ico`)).status).toBe(404)
          expect((yield* get(callbackUrl(port, { code: "c", state }, "/callback/extra"))).status).toBe(404)
          const post = yield* get(callbackUrl(port, { code: "c", state }), { method: "POST" })
          expect(post.status).toBe(405)
          expect(post.headers.get("allow")).toBe("GET")
          expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
          expect((yield* get(callbackUrl(port, { code: "c", state }))).status).toBe(200)
          yield* Fiber.join(fiber)
        })
      )
    })
  )

  it.live("only the first callback counts: a second one gets 409, and after success the server is closed", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const release = yield* Deferred.make<void>()
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const first = yield* Effect.fork(get(callbackUrl(port, { code: "first", state })))
          // Wait until the token request of the first callback is in flight.
          const mock = yield* MockHttpClient
          while ((yield* mock.requests).length === 0) yield* Effect.sleep("5 millis")
          const second = yield* get(callbackUrl(port, { code: "second", state }))
          expect(second.status).toBe(409)
          expect(second.body).toContain("already")
          yield* Deferred.succeed(release, undefined)
          expect((yield* Fiber.join(first)).status).toBe(200)
          yield* Fiber.join(fiber)
          const requests = yield* mock.requests
          expect(requests.map((request) => request.form.get("code"))).toEqual(["first"])
          const late = yield* Effect.either(get(callbackUrl(port, { code: "third", state })))
          expect(late._tag).toBe("Left")
        }),
        () => Effect.as(Deferred.await(release), tokenResponse())
      )
    })
  )

  it.live("a rejected code exchange: a failure page naming the OAuth error, and AuthenticationError", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const page = yield* get(callbackUrl(port, { code: "expired", state }))
          expect(page.status).toBe(400)
          expect(page.body).toContain("invalid_grant")
          expect(page.body).not.toContain("Authorization complete")
          const error = failureOf(yield* Fiber.await(fiber))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect((error as AuthenticationError).payload?.error).toBe("invalid_grant")
          expect(error.message).not.toContain("expired")
        }),
        () => MockHttpClient.json({ error: "invalid_grant", error_description: "code is no longer valid" }, 400)
      )
    })
  )

  it.live("a token endpoint that is down: a 502 page and TransportError", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const page = yield* get(callbackUrl(port, { code: "c", state }))
          expect(page.status).toBe(502)
          expect(page.body).toContain("Authorization failed")
          expect(failureOf(yield* Fiber.await(fiber))).toBeInstanceOf(TransportError)
        }),
        () => ({ transportError: "connection refused" }),
        { maxRetries: 0 }
      )
    })
  )

  it.live("times out with AuthenticationError, and frees the port", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber } = yield* start({ timeout: "200 millis" })
          expect(yield* canBind(port)).toBe(false)
          const error = failureOf(yield* Fiber.await(fiber))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect(error.message).toContain("timed out waiting for the authorization callback after 0.2 s")
          expect(yield* canBind(port)).toBe(true)
        })
      )
    })
  )

  it.effect("the default timeout is 300 s (TestClock, real sockets)", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber } = yield* start()
          yield* TestClock.adjust("299 seconds")
          expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
          yield* TestClock.adjust("1 second")
          const error = failureOf(yield* Fiber.await(fiber))
          expect(error).toBeInstanceOf(AuthenticationError)
          expect(error.message).toContain("after 300 s")
          expect(yield* canBind(port)).toBe(true)
        })
      )
    })
  )

  it.live("interruption closes the server and its open connections at once", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber } = yield* start()
          // An idle browser connection must not keep the server open.
          const socket = Net.connect(port, "127.0.0.1")
          const closed = Effect.async<void>((resume) => {
            socket.once("close", () => resume(Effect.void))
          })
          yield* Effect.async<void>((resume) => {
            socket.once("connect", () => resume(Effect.void))
          })
          expect(yield* canBind(port)).toBe(false)
          yield* Fiber.interrupt(fiber)
          expect(yield* canBind(port)).toBe(true)
          yield* closed
        })
      )
    })
  )

  it.live("interruption during the code exchange closes the server and ends the waiting request", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          const request = yield* Effect.fork(Effect.either(get(callbackUrl(port, { code: "c", state }))))
          const mock = yield* MockHttpClient
          while ((yield* mock.requests).length === 0) yield* Effect.sleep("5 millis")
          yield* Fiber.interrupt(fiber)
          expect(yield* canBind(port)).toBe(true)
          expect((yield* Fiber.join(request))._tag).toBe("Left")
        }),
        () => Effect.never
      )
    })
  )

  it.live("a failing onAuthorizationUrl ends the flow with its defect and frees the port", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const boom = new Error("cannot show the URL")
          const exit = yield* Effect.exit(
            authorizeLocal({
              openBrowser: false,
              onAuthorizationUrl: () => {
                throw boom
              }
            })
          )
          const defect = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
          // Effect wraps errors that cross a span in a Proxy; the original is the user's own.
          expect(Cause.originalError(defect)).toBe(boom)
          expect(yield* canBind(port)).toBe(true)
        })
      )
    })
  )

  it.live("without onAuthorizationUrl: prints the URL and opens the browser on it", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const printed: Array<string> = []
      vi.spyOn(console, "error").mockImplementation((...args: Array<unknown>) => {
        printed.push(args.join(" "))
      })
      const browser = yield* browserCalls
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const fiber = yield* Effect.fork(authorizeLocal())
          while ((yield* Ref.get(browser.calls)).length === 0) yield* Effect.sleep("5 millis")
          const [opened] = yield* Ref.get(browser.calls)
          expect(printed).toEqual([`Open this URL to authorize: ${opened}`])
          const state = new URL(opened!).searchParams.get("state")!
          expect((yield* get(callbackUrl(port, { code: "c", state }))).status).toBe(200)
          yield* Fiber.join(fiber)
        })
      ).pipe(Effect.provideService(BrowserOpener, browser.opener))
    })
  )

  it.live("when the browser cannot be opened, the URL is printed even with onAuthorizationUrl", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const printed: Array<string> = []
      vi.spyOn(console, "error").mockImplementation((...args: Array<unknown>) => {
        printed.push(args.join(" "))
      })
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, url } = yield* start({ openBrowser: true })
          while (printed.length === 0) yield* Effect.sleep("5 millis")
          expect(printed[0]).toContain("Could not open a browser (ENOENT)")
          expect(printed[0]).toContain(url.href)
          yield* Fiber.interrupt(fiber)
        })
      ).pipe(Effect.provideService(BrowserOpener, () => Effect.fail(new BrowserOpenError({ reason: "ENOENT" }))))
    })
  )

  it.live("a [::1] redirect answers on [::1] only", () =>
    Effect.gen(function* () {
      const port6 = yield* freePort
      yield* withProvider(
        `http://[::1]:${port6}/cb`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start()
          expect((yield* Effect.either(get(`http://127.0.0.1:${port6}/cb`)))._tag).toBe("Left")
          expect((yield* get(`http://[::1]:${port6}/cb?code=c&state=${state}`)).status).toBe(200)
          yield* Fiber.join(fiber)
        })
      )
    })
  )

  it.live(
    "a loopback redirect URI without a port: an ephemeral port per sign-in, the same in the URL and the exchange",
    () =>
      Effect.gen(function* () {
        const ports: Array<number> = []
        yield* withProvider(
          "http://127.0.0.1/callback",
          Effect.gen(function* () {
            for (let signIn = 0; signIn < 2; signIn++) {
              const { fiber, url, state } = yield* start()
              const redirect = new URL(url.searchParams.get("redirect_uri")!)
              expect(redirect.hostname).toBe("127.0.0.1")
              expect(redirect.pathname).toBe("/callback")
              const port = Number(redirect.port)
              expect(port).toBeGreaterThan(0)
              ports.push(port)
              expect((yield* get(callbackUrl(port, { code: `code-${signIn}`, state }))).status).toBe(200)
              yield* Fiber.join(fiber)
              const requests = yield* (yield* MockHttpClient).requests
              // RFC 6749 §4.1.3: the exchange names the redirect URI of the authorization request
              expect(requests.at(-1)!.form.get("redirect_uri")).toBe(`http://127.0.0.1:${port}/callback`)
              expect(yield* canBind(port)).toBe(true)
            }
          })
        )
        expect(ports).toHaveLength(2)
      })
  )

  it.live("no code, state or token in any log line; the work runs in an authorizeLocal span", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => {
        lines.push(JSON.stringify(message))
      })
      const spanName = yield* Deferred.make<string>()
      yield* withProvider(
        `http://127.0.0.1:${port}/callback`,
        Effect.gen(function* () {
          const { fiber, state } = yield* start({
            onAuthorizationUrl: (url) =>
              Effect.gen(function* () {
                const span = yield* Effect.orDie(Effect.currentSpan)
                yield* Deferred.succeed(spanName, span.name)
                yield* Effect.logDebug(`announced ${url.length} characters`)
              })
          })
          yield* get(callbackUrl(port, { code: "code-c0ffee", state }))
          yield* Fiber.join(fiber)
          expect(lines.length).toBeGreaterThan(0)
          for (const line of lines) {
            for (const secret of ["code-c0ffee", state, "access-1", "refresh-1", "client-secret"]) {
              expect(line).not.toContain(secret)
            }
          }
        })
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)), Logger.withMinimumLogLevel(LogLevel.All))
      expect(yield* Deferred.await(spanName)).toBe("authorizeLocal")
    })
  )
})
