/**
 * The data API fault matrix: each row injects faults into `/v1`, makes one call through the `ServiceClient`
 * (`users.me` unless the row says otherwise), and checks the error class, how many requests the emulator saw, that
 * the cached refresh token survived, and that the next call works.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import {
  ApiError,
  AuthenticationError,
  RateLimitError,
  ServiceError,
  type ServiceClient,
  type ServiceClientError,
  TransportError
} from "@service-sdk/effect"
import type { Fault } from "../../src/internal/effectApi.js"
import { cachedRefreshToken, HttpLive, PLAYLIST_ID, statsSince, userSession } from "./harness.js"

type ApiFault = Omit<Fault, "target">

/** One data API call. */
interface Call {
  readonly run: (client: ServiceClient.Service) => Effect.Effect<unknown, ServiceClientError>
}

const usersMe: Call = { run: (client) => client.users.me }

/** Any well-formed track URI will do: the emulator's playlists keep what they are given. */
const TRACK_ID = "4iV5W9uYEdYUVa79Axb7Rh"

/** Not idempotent: retried only when the server cannot have acted (RFC 9110 §9.2.2). */
const addItems: Call = {
  run: (client) => client.playlists.addItems(PLAYLIST_ID, [`service:track:${TRACK_ID}`])
}

interface FailingRow {
  readonly name: string
  readonly faults: ReadonlyArray<ApiFault>
  /** `users.me` by default */
  readonly call?: Call
  readonly client?: ServiceClient.Options
  readonly error: typeof ApiError | typeof AuthenticationError | typeof RateLimitError | typeof TransportError
  readonly status?: number
  /** RateLimitError's `retryAfter` */
  readonly retryAfter?: Duration.DurationInput
  readonly message?: RegExp
  /** API requests the emulator saw */
  readonly requests: number
  /** token requests the emulator saw (a 401 forces one refresh) */
  readonly tokenRequests: number
  readonly waitsAtLeastMs?: number
}

const failing: ReadonlyArray<FailingRow> = [
  {
    name: "500: retried, then ApiError 500",
    faults: [{ status: 500, count: 2 }],
    client: { maxRetries: 1 },
    error: ApiError,
    status: 500,
    requests: 2,
    tokenRequests: 0
  },
  {
    name: "503 with Retry-After: 1 (honoured), then ApiError 503",
    faults: [{ status: 503, headers: { "retry-after": "1" }, count: 2 }],
    client: { maxRetries: 1 },
    error: ApiError,
    status: 503,
    requests: 2,
    tokenRequests: 0,
    waitsAtLeastMs: 950
  },
  {
    name: "429 with Retry-After: 1 (honoured), then RateLimitError",
    faults: [{ status: 429, headers: { "retry-after": "1" }, count: 2 }],
    client: { maxRetries: 1 },
    error: RateLimitError,
    retryAfter: "1 second",
    requests: 2,
    tokenRequests: 0,
    waitsAtLeastMs: 950
  },
  {
    name: "429 with Retry-After beyond maxRetryAfter: RateLimitError at once",
    faults: [{ status: 429, headers: { "retry-after": "120" } }],
    error: RateLimitError,
    retryAfter: "120 seconds",
    message: /maxRetryAfter/,
    requests: 1,
    tokenRequests: 0
  },
  {
    name: "401 twice: one forced refresh, then AuthenticationError",
    faults: [{ status: 401, count: 2 }],
    error: AuthenticationError,
    status: 401,
    message: /even after a token refresh/,
    requests: 2,
    tokenRequests: 1
  },
  {
    name: "connection reset: retried (GET), then TransportError",
    faults: [{ reset: true, count: 2 }],
    client: { maxRetries: 1 },
    error: TransportError,
    requests: 2,
    tokenRequests: 0
  },
  {
    name: "a delay beyond the timeout: retried, then TransportError",
    faults: [{ delayMs: 2_000, count: 2 }],
    client: { maxRetries: 1, timeout: "300 millis" },
    error: TransportError,
    message: /within/,
    requests: 2,
    tokenRequests: 0
  },
  {
    name: "POST answered 500: not retried (it may have acted), ApiError 500",
    call: addItems,
    faults: [{ status: 500 }],
    error: ApiError,
    status: 500,
    requests: 1,
    tokenRequests: 0
  },
  {
    name: "POST with a connection reset: not retried, TransportError",
    call: addItems,
    faults: [{ reset: true }],
    error: TransportError,
    requests: 1,
    tokenRequests: 0
  },
  {
    name: "truncated JSON with 200: ApiError, not retried",
    faults: [{ malformed: true }],
    error: ApiError,
    status: 200,
    requests: 1,
    tokenRequests: 0
  }
]

interface RecoveringRow {
  readonly name: string
  readonly faults: ReadonlyArray<ApiFault>
  readonly call?: Call
  readonly client?: ServiceClient.Options
  readonly requests: number
  readonly tokenRequests: number
}

const recovering: ReadonlyArray<RecoveringRow> = [
  {
    name: "2 × 502, then success (default retries)",
    faults: [{ status: 502, count: 2 }],
    requests: 3,
    tokenRequests: 0
  },
  { name: "one 401: forced refresh, then success", faults: [{ status: 401 }], requests: 2, tokenRequests: 1 },
  {
    name: "POST answered 503 with Retry-After: 0: retried (the server did not act), then success",
    call: addItems,
    faults: [{ status: 503, headers: { "retry-after": "0" } }],
    requests: 2,
    tokenRequests: 0
  },
  {
    name: "one 429 with Retry-After: 1, then success",
    faults: [{ status: 429, headers: { "retry-after": "1" } }],
    client: { maxRetries: 1 },
    requests: 2,
    tokenRequests: 0
  }
]

describe("data API faults: the call fails with a typed error and loses nothing", () => {
  for (const row of failing) {
    it.scopedLive(row.name, () =>
      Effect.gen(function* () {
        const { cache, client, emulator } = yield* userSession({ client: row.client ?? {} })
        const refreshToken = yield* cachedRefreshToken(cache)
        expect(refreshToken).toEqual(expect.any(String))
        for (const fault of row.faults) yield* emulator.injectFault({ target: "api", ...fault })

        const since = yield* statsSince(emulator)
        const start = yield* Clock.currentTimeMillis
        const call = row.call ?? usersMe
        const error = yield* Effect.flip(call.run(client))
        const elapsed = (yield* Clock.currentTimeMillis) - start

        expect(error).toBeInstanceOf(row.error)
        expect(error).toBeInstanceOf(ServiceError)
        if (row.status !== undefined) expect(error).toMatchObject({ status: row.status })
        if (row.retryAfter !== undefined) {
          expect(Duration.toMillis((error as RateLimitError).retryAfter)).toBe(Duration.toMillis(row.retryAfter))
        }
        if (row.message !== undefined) expect(error.message).toMatch(row.message)
        const seen = yield* since
        expect(seen.api).toBe(row.requests)
        expect(seen.token).toBe(row.tokenRequests)
        if (row.waitsAtLeastMs !== undefined) expect(elapsed).toBeGreaterThanOrEqual(row.waitsAtLeastMs)
        expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)

        // the fault is gone: the next call is one request and works
        const next = yield* statsSince(emulator)
        yield* call.run(client)
        const after = yield* next
        expect(after).toMatchObject({ api: 1, token: 0 })
        expect(Object.keys(after.apiByStatus)).toEqual([expect.stringMatching(/^2\d\d$/)])
      }).pipe(Effect.provide(HttpLive))
    )
  }
})

describe("data API faults shorter than the retries: the call succeeds", () => {
  for (const row of recovering) {
    it.scopedLive(row.name, () =>
      Effect.gen(function* () {
        const { cache, client, emulator } = yield* userSession({ client: row.client ?? {} })
        const refreshToken = yield* cachedRefreshToken(cache)
        for (const fault of row.faults) yield* emulator.injectFault({ target: "api", ...fault })
        const since = yield* statsSince(emulator)
        yield* (row.call ?? usersMe).run(client)
        const seen = yield* since
        expect(seen.api).toBe(row.requests)
        expect(seen.token).toBe(row.tokenRequests)
        expect(Object.entries(seen.apiByStatus).filter(([status]) => status.startsWith("2"))).toEqual([
          [expect.any(String), 1]
        ])
        expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
      }).pipe(Effect.provide(HttpLive))
    )
  }
})

describe("token failures inside a request surface as they are (no nested retries)", () => {
  it.scopedLive("a 401 whose forced refresh meets 503s: TransportError after the provider's own attempts", () =>
    Effect.gen(function* () {
      // the client would retry 3 times; the provider retries once: 2 token requests, not 2 × 4
      const { cache, client, emulator, provider } = yield* userSession({ provider: { maxRetries: 1 } })
      const refreshToken = yield* cachedRefreshToken(cache)
      yield* emulator.revoke(Redacted.value(yield* provider.getAccessToken))
      yield* emulator.injectFault({ target: "token", status: 503, count: 2 })
      const since = yield* statsSince(emulator)
      const error = yield* Effect.flip(client.users.me)
      expect(error).toBeInstanceOf(TransportError)
      expect(error).toMatchObject({ status: 503 })
      expect(yield* since).toMatchObject({ token: 2, api: 1, apiByStatus: { "401": 1 } })
      expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
      expect((yield* client.users.me).id).toBe("emulator-user")
    }).pipe(Effect.provide(HttpLive))
  )

  it.scopedLive("a stale token whose renewal fails: no API request at all", () =>
    Effect.gen(function* () {
      // tokenLifetime 0: every call renews first
      const { cache, client, emulator } = yield* userSession({
        emulator: { tokenLifetime: 0 },
        provider: { maxRetries: 1 }
      })
      const refreshToken = yield* cachedRefreshToken(cache)
      yield* emulator.injectFault({ target: "token", reset: true, count: 2 })
      const since = yield* statsSince(emulator)
      const error = yield* Effect.flip(client.albums.get("6akEvsycLGftJxYudPjmqK"))
      expect(error).toBeInstanceOf(TransportError)
      expect(yield* since).toMatchObject({ token: 2, refresh_token: 2, api: 0 })
      expect(yield* cachedRefreshToken(cache)).toBe(refreshToken)
    }).pipe(Effect.provide(HttpLive))
  )
})
