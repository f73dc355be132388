/**
 * Part 16. Many users' renewals: 200 users signed in through `UserTokens` whose tokens all went stale at one expiry,
 * 5 callers each at once (1,000 `getAccessToken` calls: 200 renewals, each shared by its user's 5 callers), against
 * the same 200 refresh-token requests made directly through `OAuthClient.refresh`, 200 at once (the same
 * concurrency on the token endpoint). Counts the token requests (must be 200) and the wall time. Its own floor (issue
 * 43), measured in the same rounds: what any single flight per user costs at least, with no SDK beyond the refresh
 * itself: per user one leader that makes the refresh through `OAuthClient.refresh` and completes a `Deferred`, and 4
 * callers that await it (the same 1,000 fibers in one `Effect.all`); target ≤ 1.1× it.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { OAuthClient, TokenInfo, TokenStore, UserTokens } from "@service-sdk/effect"
import { type Context, credentials } from "../context.js"
import { median, ratioOf, timed } from "../harness.js"
import { gc, threadCpuNanos } from "../machine.js"
import { obtainRefreshToken } from "../peers.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

const USERS = 200
const CALLERS = 5

/** Main-thread CPU (ms) since `start` (NaN where the platform does not tell). */
const cpuSince = (start: number | undefined) => {
  const end = threadCpuNanos()
  return start === undefined || end === undefined ? Number.NaN : (end - start) / 1e6
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

export const usersRenewals = async (context: Context): Promise<PartResult> => {
  const rounds = context.quick ? 1 : 31
  // the emulator does not rotate refresh tokens by default: one refresh token serves every user
  const refreshToken = Redacted.make(await obtainRefreshToken(context.emulator))
  const oauth = await run(
    OAuthClient.make(credentials(context)).pipe(Effect.provideService(HttpClient.HttpClient, context.http))
  )
  const ids = Array.from({ length: USERS }, (_, i) => `user-${i}`)

  /** Fresh `UserTokens`, every user signed in with a token that went stale a second ago: 5 callers per user. */
  const throughUserTokens = async () => {
    const scope = await run(Scope.make())
    try {
      const store = await run(TokenStore.memory())
      const users = await run(
        UserTokens.make({ ...credentials(context), store }).pipe(
          Effect.provideService(HttpClient.HttpClient, context.http),
          Scope.extend(scope)
        )
      )
      const expiresAt = (await run(Clock.currentTimeMillis)) / 1000 - 1
      await run(
        Effect.forEach(
          ids,
          (id) =>
            users.signIn(id, new TokenInfo({ accessToken: Redacted.make(`${id}-stale`), refreshToken, expiresAt })),
          { discard: true }
        )
      )
      const callers = ids.flatMap((id) => Array.from({ length: CALLERS }, () => users.provider(id).getAccessToken))
      await gc(2)
      const before = await context.emulator.tokenRequests()
      const cpu = threadCpuNanos()
      const { ms } = await timed(() => run(Effect.all(callers, { concurrency: "unbounded", discard: true })))
      const cpuMs = cpuSince(cpu)
      return { ms, cpuMs, requests: (await context.emulator.tokenRequests()) - before }
    } finally {
      await run(Scope.close(scope, Exit.void))
    }
  }

  const direct = async () => {
    await gc(2)
    const refreshes = ids.map(() => oauth.refresh(refreshToken))
    const cpu = threadCpuNanos()
    const { ms } = await timed(() => run(Effect.all(refreshes, { concurrency: "unbounded", discard: true })))
    return { ms, cpuMs: cpuSince(cpu) }
  }

  /** The floor: per user a leader refreshing and completing a `Deferred`, and `CALLERS - 1` fibers awaiting it. */
  const floor = async () => {
    await gc(2)
    const fibers = ids.flatMap(() => {
      const done = Effect.runSync(Deferred.make<Redacted.Redacted<string>, unknown>())
      return [
        Effect.flatMap(Effect.exit(oauth.refresh(refreshToken)), (exit) =>
          Deferred.done(
            done,
            Exit.map(exit, (info) => info.accessToken)
          )
        ),
        ...Array.from({ length: CALLERS - 1 }, () => Deferred.await(done))
      ]
    })
    const cpu = threadCpuNanos()
    const { ms } = await timed(() => run(Effect.all(fibers, { concurrency: "unbounded", discard: true })))
    return { ms, cpuMs: cpuSince(cpu) }
  }

  // one unrecorded round of each warms the code paths up
  await throughUserTokens()
  await direct()
  await floor()
  const sdk: Array<number> = []
  const base: Array<number> = []
  const floors: Array<number> = []
  const sdkCpu: Array<number> = []
  const baseCpu: Array<number> = []
  const floorCpu: Array<number> = []
  const requests: Array<number> = []
  const runs: ReadonlyArray<() => Promise<void>> = [
    async () => {
      const result = await throughUserTokens()
      sdk.push(result.ms)
      sdkCpu.push(result.cpuMs)
      requests.push(result.requests)
    },
    async () => {
      const result = await direct()
      base.push(result.ms)
      baseCpu.push(result.cpuMs)
    },
    async () => {
      const result = await floor()
      floors.push(result.ms)
      floorCpu.push(result.cpuMs)
    }
  ]
  for (let round = 0; round < rounds; round++) {
    // rotate which goes first
    for (let i = 0; i < runs.length; i++) await runs[(round + i) % runs.length]!()
  }
  return {
    title: "Many users' renewals (one expiry, 20 ms token latency)",
    figures: [
      figure(
        {
          label: `${USERS} users × ${CALLERS} callers: token requests (max of rounds)`,
          value: Math.max(...requests),
          unit: "requests"
        },
        { target: { on: "value", op: "==", limit: USERS } }
      ),
      figure(
        { label: `${USERS} users × ${CALLERS} callers through UserTokens: wall time`, value: median(sdk), unit: "ms" },
        {
          baseline: {
            label: `the same ${USERS} refreshes through OAuthClient.refresh`,
            value: median(base),
            unit: "ms"
          },
          ratio: ratioOf(sdk, base),
          target: { on: "ratio", op: "<=", limit: 1.5 }
        }
      ),
      figure(
        {
          label: `${USERS} users × ${CALLERS} callers through UserTokens: wall time over its floor`,
          value: median(sdk),
          unit: "ms"
        },
        {
          baseline: {
            label: `floor: ${USERS} leaders (OAuthClient.refresh, then a Deferred) + ${USERS * (CALLERS - 1)} callers awaiting it`,
            value: median(floors),
            unit: "ms"
          },
          ratio: ratioOf(sdk, floors),
          target: { on: "ratio", op: "<=", limit: 1.1 }
        }
      ),
      figure(
        { label: "the floor over the direct refreshes (information)", value: median(floors), unit: "ms" },
        {
          baseline: {
            label: `the same ${USERS} refreshes through OAuthClient.refresh`,
            value: median(base),
            unit: "ms"
          },
          ratio: ratioOf(floors, base)
        }
      )
    ],
    notes: [
      `${rounds} rounds after one warm-up round, UserTokens, direct refreshes and floor rotating which goes first, each after gc(); each UserTokens round on a fresh UserTokens over TokenStore.memory with every user signed in with a token stale by 1 s`,
      `main-thread CPU (median of rounds): UserTokens ${median(sdkCpu).toFixed(0)} ms, the direct refreshes ${median(baseCpu).toFixed(0)} ms, the floor ${median(floorCpu).toFixed(0)} ms (the rest of the wall time is the emulator's thread and the 20 ms latency)`,
      `the floor (issue 43): per user, one leader fiber refreshing through OAuthClient.refresh and completing a Deferred, and ${CALLERS - 1} fibers awaiting it, ${USERS * CALLERS} fibers in one Effect.all: what a single flight per user costs at least, with no SDK beyond the refresh; target ≤ 1.1× it`,
      `baseline: ${USERS} OAuthClient.refresh calls at once on the same connection pool (the token endpoint sees the same ${USERS} concurrent requests); the emulator adds 20 ms to every token response`
    ],
    data: { sdk, base, floor: floors, sdkCpu, baseCpu, floorCpu, requests }
  }
}
