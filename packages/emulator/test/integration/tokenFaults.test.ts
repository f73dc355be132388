/**
 * The token endpoint fault matrix: each row injects faults into `POST /api/token`, forces a refresh, and checks the
 * error class, how many requests the emulator saw, that the cached tokens survived, and that the next call works.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AuthenticationError, ServiceError, TransportError } from "@service-sdk/effect"
import type { Fault } from "../../src/internal/effectApi.js"
import { authorizeCode, cachedAccessToken, cachedRefreshToken, HttpLive, statsSince, userSession } from "./harness.js"

type TokenFault = Omit<Fault, "target">

interface FailingRow {
  readonly name: string
  /** queued in order before the refresh */
  readonly faults: ReadonlyArray<TokenFault>
  readonly options?: { readonly maxRetries?: number; readonly timeout?: Duration.DurationInput }
  readonly error: typeof TransportError | typeof AuthenticationError
  readonly status?: number
  /** the OAuth `error` of the AuthenticationError's payload */
  readonly payload?: string
  /** what the message says, roughly */
  readonly message?: RegExp
  /** token requests the emulator saw: the attempts */
  readonly requests: number
  /** a lower bound on the time the call took, when it must have waited for Retry-After */
  readonly waitsAtLeastMs?: number
}

const json = (body: unknown) => JSON.stringify(body)

// Retried rows queue exactly as many faults as there are attempts (maxRetries + 1), so the call fails and the
// next one meets no fault. Rows that are never retried keep the default maxRetries (3) to show it.
const failing: ReadonlyArray<FailingRow> = [
  {
    name: "500, default retries: 4 attempts, then TransportError",
    faults: [{ status: 500, count: 4 }],
    error: TransportError,
    status: 500,
    requests: 4
  },
  {
    name: "502",
    faults: [{ status: 502, count: 2 }],
    options: { maxRetries: 1 },
    error: TransportError,
    status: 502,
    requests: 2
  },
  {
    name: "503",
    faults: [{ status: 503, count: 2 }],
    options: { maxRetries: 1 },
    error: TransportError,
    status: 503,
    requests: 2
  },
  {
    name: "503 with Retry-After: 1 (honoured)",
    faults: [{ status: 503, headers: { "retry-after": "1" }, count: 2 }],
    options: { maxRetries: 1 },
    error: TransportError,
    status: 503,
    requests: 2,
    waitsAtLeastMs: 950
  },
  {
    name: "503 with Retry-After beyond 60 s: TransportError at once",
    faults: [{ status: 503, headers: { "retry-after": "120" } }],
    error: TransportError,
    status: 503,
    message: /retry after/,
    requests: 1
  },
  {
    name: "a delay beyond the timeout",
    faults: [{ delayMs: 2_000, count: 2 }],
    options: { maxRetries: 1, timeout: "300 millis" },
    error: TransportError,
    message: /timed out/,
    requests: 2
  },
  {
    name: "connection reset",
    faults: [{ reset: true, count: 2 }],
    options: { maxRetries: 1 },
    error: TransportError,
    requests: 2
  },
  {
    name: "an HTML body with status 200",
    faults: [{ status: 200, body: "<html><body><h1>Service temporarily unavailable</h1></body></html>" }],
    error: AuthenticationError,
    status: 200,
    payload: "invalid_token_response",
    message: /not JSON/,
    requests: 1
  },
  {
    name: "truncated JSON",
    faults: [{ malformed: true }],
    error: AuthenticationError,
    status: 200,
    payload: "invalid_token_response",
    requests: 1
  },
  {
    name: "no access_token",
    faults: [{ status: 200, body: json({ token_type: "Bearer", expires_in: 3600 }) }],
    error: AuthenticationError,
    payload: "invalid_token_response",
    message: /access_token/,
    requests: 1
  },
  {
    name: "expires_in as a string",
    faults: [{ status: 200, body: json({ access_token: "a-token-value", token_type: "Bearer", expires_in: "3600" }) }],
    error: AuthenticationError,
    payload: "invalid_token_response",
    message: /expires_in/,
    requests: 1
  },
  {
    name: "a negative expires_in",
    faults: [{ status: 200, body: json({ access_token: "a-token-value", token_type: "Bearer", expires_in: -5 }) }],
    error: AuthenticationError,
    payload: "invalid_token_response",
    message: /expires_in/,
    requests: 1
  },
  {
    name: "a token_type other than Bearer",
    faults: [{ status: 200, body: json({ access_token: "a-token-value", token_type: "mac", expires_in: 3600 }) }],
    error: AuthenticationError,
    payload: "invalid_token_response",
    message: /token_type/,
    requests: 1
  },
  {
    name: "401 invalid_client (not retried)",
    faults: [{ status: 401 }],
    error: AuthenticationError,
    status: 401,
    payload: "invalid_client",
    requests: 1
  },
  {
    name: "429 with Retry-After: 1 (honoured)",
    faults: [{ status: 429, headers: { "retry-after": "1" }, count: 2 }],
    options: { maxRetries: 1 },
    error: TransportError,
    status: 429,
    requests: 2,
    waitsAtLeastMs: 950
  }
]

interface RecoveringRow {
  readonly name: string
  readonly faults: ReadonlyArray<TokenFault>
  readonly options?: { readonly maxRetries?: number }
  readonly requests: number
  /** the access token the refresh must yield, when the fault answers with one */
  readonly accessToken?: string
}

const recovering: ReadonlyArray<RecoveringRow> = [
  { name: "2 × 503, then success (default retries)", faults: [{ status: 503, count: 2 }], requests: 3 },
  { name: "a reset, then success", faults: [{ reset: true }], options: { maxRetries: 1 }, requests: 2 },
  {
    name: "a 500 then a 429, then success",
    faults: [{ status: 500 }, { status: 429, headers: { "retry-after": "0" } }],
    requests: 3
  },
  {
    name: "an answer with refresh_token: null keeps the cached refresh token (RFC 6749 §6)",
    faults: [
      {
        status: 200,
        body: json({
          access_token: "answered-access-token",
          token_type: "Bearer",
          expires_in: 3600,
          refresh_token: null
        })
      }
    ],
    requests: 1,
    accessToken: "answered-access-token"
  }
]

describe("token endpoint faults: the refresh fails with a typed error and loses nothing", () => {
  for (const row of failing) {
    it.scopedLive(row.name, () =>
      Effect.gen(function* () {
        const { cache, client, emulator, provider } = yield* userSession({ provider: row.options ?? {} })
        const current = yield* provider.getAccessToken
        const refreshToken = yield* cachedRefreshToken(cache)
        expect(refreshToken).toEqual(expect.any(String))
        for (const fault of row.faults) yield* emulator.injectFault({ target: "token", ...fault })

        const since = yield* statsSince(emulator)
        const start = yield* Clock.currentTimeMillis
        const error = yield* Effect.flip(provider.forceRefresh(current))
        const elapsed = (yield* Clock.currentTimeMillis) - start

        expect(error).toBeInstanceOf(row.error)
        expect(error).toBeInstanceOf(ServiceError)
        if (row.status !== undefined) expect(error).toMatchObject({ status: row.status })
        if (row.payload !== undefined) expect(error).toMatchObject({ payload: { error: row.payload } })
        if (row.message !== undefined) expect(error.message).toMatch(row.message)
        const seen = yield* since
        expect(seen.token).toBe(row.requests)
        expect(seen.refresh_token).toBe(row.requests)
        if (row.waitsAtLeastMs !== undefined) expect(elapsed).toBeGreaterThanOrEqual(row.waitsAtLeastMs)

        // nothing lost: the cache still holds the refresh token and the (still valid) access token
        expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
        expect(yield* cachedAccessToken(cache)).toBe(Redacted.value(current))
        expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(current))

        // the fault is gone: the next refresh is one request and works
        const next = yield* statsSince(emulator)
        const fresh = yield* provider.forceRefresh(current)
        expect(Redacted.value(fresh)).not.toBe(Redacted.value(current))
        expect((yield* next).token).toBe(1)
        expect((yield* client.users.me).id).toBe("emulator-user")
      }).pipe(Effect.provide(HttpLive))
    )
  }
})

describe("400 invalid_grant on a refresh (DESIGN §4)", () => {
  it.scopedLive("final and not retried; the refresh token is never sent again until a new sign-in", () =>
    Effect.gen(function* () {
      const { cache, client, emulator, provider } = yield* userSession()
      const current = yield* provider.getAccessToken
      const refreshToken = yield* cachedRefreshToken(cache)
      yield* emulator.injectFault({
        target: "token",
        status: 400,
        body: json({ error: "invalid_grant", error_description: "Refresh token revoked" })
      })
      const since = yield* statsSince(emulator)
      const error = yield* Effect.flip(provider.forceRefresh(current))
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(error).toMatchObject({ status: 400, payload: { error: "invalid_grant" } })
      expect((yield* since).refresh_token).toBe(1)

      // the entry is kept, marked: the still valid access token is served, the refresh token never sent again
      expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
      expect(Option.getOrThrow(yield* cache.get).refreshRejected).toBe(true)
      expect(Redacted.value(yield* provider.getAccessToken)).toBe(Redacted.value(current))
      const again = yield* Effect.flip(provider.forceRefresh(current))
      expect(again).toMatchObject({ _tag: "AuthenticationError", payload: { error: "invalid_grant" } })
      expect((yield* since).refresh_token).toBe(1)

      // a new sign-in recovers
      const code = yield* authorizeCode(provider.getAuthorizationUrl({ state: "again" }), "again")
      yield* provider.exchangeCode(code)
      const fresh = yield* provider.forceRefresh(current)
      expect(Redacted.value(fresh)).not.toBe(Redacted.value(current))
      expect((yield* client.users.me).id).toBe("emulator-user")
    }).pipe(Effect.provide(HttpLive))
  )
})

describe("token endpoint faults shorter than the retries: the refresh succeeds", () => {
  for (const row of recovering) {
    it.scopedLive(row.name, () =>
      Effect.gen(function* () {
        const { cache, client, emulator, provider } = yield* userSession({ provider: row.options ?? {} })
        const current = yield* provider.getAccessToken
        const refreshToken = yield* cachedRefreshToken(cache)
        for (const fault of row.faults) yield* emulator.injectFault({ target: "token", ...fault })
        const since = yield* statsSince(emulator)
        const fresh = yield* provider.forceRefresh(current)
        expect(Redacted.value(fresh)).not.toBe(Redacted.value(current))
        if (row.accessToken !== undefined) expect(Redacted.value(fresh)).toBe(row.accessToken)
        expect(yield* since).toMatchObject({ token: row.requests, refresh_token: row.requests })
        expect(yield* cachedAccessToken(cache)).toBe(Redacted.value(fresh))
        expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
        // (an access token the emulator did not issue costs one 401 and one forced refresh with that refresh token)
        expect((yield* client.users.me).id).toBe("emulator-user")
      }).pipe(Effect.provide(HttpLive))
    )
  }
})
