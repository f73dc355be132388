/**
 * Part 9. Expiry under load: `LOOPS` calls of `getAccessToken` start every millisecond (open loop) for a window in
 * whose middle the token goes stale (its renewal takes the emulator's fixed token latency). The latency of every
 * call is recorded; figures are p50 and p99 over the window, as ratios of the same load on a token that does not
 * expire (the cached path). Cases: the Effect provider without and with `refreshAhead`, and google-auth-library's
 * `OAuth2Client` with its eager refresh (`eagerRefreshThresholdMillis`), whose callers await the refresh it starts.
 */
import { OAuth2Client } from "google-auth-library"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { ClientCredentials, TokenCache, TokenInfo } from "@service-sdk/effect"
import { type Context, credentials } from "../context.js"
import { median, ratioOf } from "../harness.js"
import { figure } from "../report.js"
import { obtainRefreshToken } from "../peers.js"
import type { PartResult } from "./part.js"

const LOOPS = 16
const SKEW_S = 30
const REFRESH_AHEAD: Duration.DurationInput = "10 seconds"
const EAGER_MS = 10_000

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}

interface Run {
  /** call latencies, ms */
  readonly latencies: ReadonlyArray<number>
  readonly tokenRequests: number
}

/**
 * Open-loop load: every millisecond for `windowMs`, `LOOPS` calls start whether or not earlier ones have ended (a
 * caller that waits does not slow the arrivals, so the calls that arrive during a renewal are all counted).
 */
const load = (start: (done: () => void) => void, windowMs: number): Promise<ReadonlyArray<number>> =>
  new Promise((resolve) => {
    const latencies: Array<number> = []
    let pending = 0
    let stopped = false
    const end = performance.now() + windowMs
    const finish = () => {
      if (stopped && pending === 0) resolve(latencies)
    }
    const tick = setInterval(() => {
      if (performance.now() >= end) {
        clearInterval(tick)
        stopped = true
        finish()
        return
      }
      for (let i = 0; i < LOOPS; i++) {
        const begun = performance.now()
        pending++
        start(() => {
          latencies.push(performance.now() - begun)
          pending--
          finish()
        })
      }
    }, 1)
  })

/** Starts `call` in a fiber of its own (no Promise), reporting when it ends. */
const startEffect =
  (call: Effect.Effect<unknown, unknown>) =>
  (done: () => void): void => {
    Effect.runFork(call).addObserver(done)
  }

const startPromise =
  (call: () => Promise<unknown>) =>
  (done: () => void): void => {
    call().then(done, done)
  }

export const expiryUnderLoad = async (context: Context): Promise<PartResult> => {
  const windowMs = context.quick ? 300 : 1000
  const rounds = context.quick ? 1 : 5
  const fetched = await Effect.runPromise(
    ClientCredentials.make(credentials(context)).pipe(
      Effect.flatMap((provider) => provider.getAccessToken),
      Effect.scoped,
      Effect.provideService(HttpClient.HttpClient, context.http)
    )
  )
  const refreshToken = await obtainRefreshToken(context.emulator)

  /** An Effect provider whose cache holds a token going stale `staleInMs` from now. */
  const sdkRun = async (staleInMs: number, refreshAhead: Duration.DurationInput | undefined): Promise<Run> => {
    const expiresAt = ((await Effect.runPromise(Clock.currentTimeMillis)) + staleInMs) / 1000 + SKEW_S
    const provider = await Effect.runPromise(
      Effect.gen(function* () {
        const tokenCache = yield* TokenCache.memory(new TokenInfo({ accessToken: fetched, expiresAt }))
        return yield* ClientCredentials.make({
          ...credentials(context),
          tokenCache,
          skew: `${SKEW_S} seconds`,
          ...(refreshAhead === undefined ? {} : { refreshAhead })
        })
      }).pipe(
        // the provider's background renewals (refreshAhead) live as long as the bench process
        Effect.provideServiceEffect(Scope.Scope, Scope.make()),
        Effect.provideService(HttpClient.HttpClient, context.http)
      )
    )
    await Effect.runPromise(provider.getAccessToken)
    const before = await context.emulator.tokenRequests()
    const latencies = await load(startEffect(provider.getAccessToken), windowMs)
    return { latencies, tokenRequests: (await context.emulator.tokenRequests()) - before }
  }

  /** google-auth-library, eager refresh on, its token expiring `staleInMs` after entering the eager window. */
  const googleRun = async (staleInMs: number): Promise<Run> => {
    const client = new OAuth2Client({
      clientId: context.emulator.clientId,
      clientSecret: context.emulator.clientSecret,
      endpoints: { oauth2TokenUrl: `${context.emulator.authUrl}/api/token` },
      eagerRefreshThresholdMillis: EAGER_MS
    })
    // the peer reads the wall clock; the default Effect Clock is the same clock
    const now = await Effect.runPromise(Clock.currentTimeMillis)
    client.setCredentials({
      refresh_token: refreshToken,
      access_token: Redacted.value(fetched),
      expiry_date: now + staleInMs + EAGER_MS
    })
    await client.getAccessToken()
    const before = await context.emulator.tokenRequests()
    const latencies = await load(
      startPromise(() => client.getAccessToken()),
      windowMs
    )
    return { latencies, tokenRequests: (await context.emulator.tokenRequests()) - before }
  }

  const half = windowMs / 2
  const cases = {
    cached: () => sdkRun(3_600_000, undefined),
    plain: () => sdkRun(half, undefined),
    ahead: () => sdkRun(half, REFRESH_AHEAD),
    google: () => googleRun(half)
  } as const
  type Case = keyof typeof cases
  const names = Object.keys(cases) as Array<Case>
  const p50 = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<Case, Array<number>>
  const p99 = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<Case, Array<number>>
  const requests = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<Case, Array<number>>
  const calls = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<Case, Array<number>>
  for (let round = 0; round < rounds; round++) {
    for (const [index] of names.entries()) {
      const name = names[(index + round) % names.length]!
      const run = await cases[name]()
      p50[name].push(percentile(run.latencies, 50) * 1e6)
      p99[name].push(percentile(run.latencies, 99) * 1e6)
      requests[name].push(run.tokenRequests)
      calls[name].push(run.latencies.length)
    }
  }
  const ms = (name: Case, values: Record<Case, Array<number>>) => median(values[name])
  const baseline99 = { label: "p99, cached path (no expiry)", value: ms("cached", p99), unit: "ns/call" } as const
  const baseline50 = { label: "p50, cached path (no expiry)", value: ms("cached", p50), unit: "ns/call" } as const
  const row = (name: Case, label: string, target?: number) => [
    figure(
      { label: `${label}: p50`, value: ms(name, p50), unit: "ns/call" },
      { baseline: baseline50, ratio: ratioOf(p50[name], p50.cached) }
    ),
    figure(
      { label: `${label}: p99`, value: ms(name, p99), unit: "ns/call" },
      {
        baseline: baseline99,
        ratio: ratioOf(p99[name], p99.cached),
        ...(target === undefined ? {} : { target: { on: "ratio", op: "<=", limit: target } as const })
      }
    ),
    figure({
      label: `${label}: token requests in the window (max of rounds)`,
      value: Math.max(...requests[name]),
      unit: "requests"
    })
  ]
  return {
    title: "Expiry under load (getAccessToken latency over an expiry)",
    figures: [
      ...row("ahead", `Effect API, refreshAhead ${REFRESH_AHEAD}`, 2),
      ...row("plain", "Effect API, no refreshAhead"),
      ...row("google", `google-auth-library, eager refresh ${EAGER_MS / 1000} s`)
    ],
    notes: [
      `${LOOPS} calls started every millisecond for ${windowMs} ms (open loop: arrivals do not wait for earlier calls); the token goes stale (google: enters its eager window) half-way; the renewal takes the emulator's token latency; ${rounds} interleaved round(s); ratios are per round against the cached path's`,
      `calls per window (median): cached ${median(calls.cached)}, refreshAhead ${median(calls.ahead)}, plain ${median(calls.plain)}, google ${median(calls.google)}`
    ],
    data: { p50, p99, requests, calls }
  }
}
