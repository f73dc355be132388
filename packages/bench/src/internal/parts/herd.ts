/**
 * Part 3. The thundering herd: K concurrent callers on a provider whose cache is empty (a cold fetch, which the
 * emulator answers after its fixed 20 ms latency, so every caller starts before it completes). Counts the token
 * requests the emulator answered (must be 1) and the wall time, each round on a fresh provider.
 *
 * - Effect API: K fibers in one `Effect.all`, against one cold fetch plus the same K fibers doing cached calls, and
 *   against the Effect-only floor: K fibers awaiting one `Deferred` that a cold fetch completes (what any single
 *   flight on Effect costs at least: K suspended fibers and their garbage).
 * - Promise facade: K concurrent `getAccessToken()` Promises, against one cold call (google-auth-library beside it).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type { TokenProviderService } from "@service-sdk/effect"
import { type Context, makeAsyncProvider, makeProvider } from "../context.js"
import { median, ratioOf, timed } from "../harness.js"
import { gc, wallClockMillis } from "../machine.js"
import { googleAuth, obtainRefreshToken } from "../peers.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

const fibers = (provider: TokenProviderService, k: number) =>
  Effect.all(
    Array.from({ length: k }, () => provider.getAccessToken),
    { concurrency: "unbounded", discard: true }
  )

/** The floor: one cold fetch completes a `Deferred` that the K - 1 other fibers await (K fibers, as the herd). */
const floor = (provider: TokenProviderService, k: number) =>
  Effect.flatMap(Deferred.make<Redacted.Redacted<string>>(), (done) =>
    Effect.all(
      [
        Effect.flatMap(provider.getAccessToken, (token) => Deferred.succeed(done, token)),
        ...Array.from({ length: k - 1 }, () => Deferred.await(done))
      ],
      { concurrency: "unbounded", discard: true }
    )
  )

/** Wall time of `run` and the token requests the emulator answered meanwhile. */
const counted = async (context: Context, run: () => Promise<unknown>) => {
  const before = await context.emulator.tokenRequests()
  const { ms } = await timed(run)
  return { ms, requests: (await context.emulator.tokenRequests()) - before }
}

interface Rounds {
  readonly herd: Array<number>
  readonly baseline: Array<number>
  /** the Effect-only floor (Effect API only) */
  readonly floor: Array<number>
  readonly requests: Array<number>
}

/** One round: the herd and its baselines, rotating which goes first; each starts on a collected heap. */
const alternate = async (
  rounds: Rounds,
  herd: () => Promise<{ readonly ms: number; readonly requests: number }>,
  baseline: () => Promise<number>,
  floorBaseline?: () => Promise<number>
) => {
  const runs: Array<() => Promise<void>> = [
    async () => {
      await gc(2)
      const result = await herd()
      rounds.herd.push(result.ms)
      rounds.requests.push(result.requests)
    },
    async () => {
      await gc(2)
      rounds.baseline.push(await baseline())
    }
  ]
  if (floorBaseline !== undefined) {
    runs.push(async () => {
      await gc(2)
      rounds.floor.push(await floorBaseline())
    })
  }
  const first = rounds.herd.length % runs.length
  for (let i = 0; i < runs.length; i++) await runs[(first + i) % runs.length]!()
}

const effectRound = async (context: Context, k: number, rounds: Rounds) => {
  const herdProvider = await makeProvider(context)
  const coldProvider = await makeProvider(context)
  const floorProvider = await makeProvider(context)
  await alternate(
    rounds,
    () => counted(context, () => Effect.runPromise(fibers(herdProvider, k))),
    async () => {
      const cold = await timed(() => Effect.runPromise(coldProvider.getAccessToken))
      const cached = await timed(() => Effect.runPromise(fibers(coldProvider, k)))
      return cold.ms + cached.ms
    },
    async () => (await timed(() => Effect.runPromise(floor(floorProvider, k)))).ms
  )
}

const promiseRound = async (context: Context, k: number, rounds: Rounds) => {
  const herdProvider = makeAsyncProvider(context)
  const coldProvider = makeAsyncProvider(context)
  try {
    await alternate(
      rounds,
      () => counted(context, () => Promise.all(Array.from({ length: k }, () => herdProvider.getAccessToken()))),
      async () => (await timed(() => coldProvider.getAccessToken())).ms
    )
  } finally {
    await Promise.all([herdProvider.close(), coldProvider.close()])
  }
}

const googleRound = async (context: Context, refreshToken: string, k: number, rounds: Rounds) => {
  const herdClient = googleAuth(context.emulator, { refresh_token: refreshToken })
  const coldClient = googleAuth(context.emulator, { refresh_token: refreshToken })
  herdClient.setCredentials(wallClockMillis() - 1000)
  coldClient.setCredentials(wallClockMillis() - 1000)
  await alternate(
    rounds,
    () => counted(context, () => Promise.all(Array.from({ length: k }, () => herdClient.client.getAccessToken()))),
    async () => (await timed(() => coldClient.client.getAccessToken())).ms
  )
}

const run = async (count: number, round: (rounds: Rounds) => Promise<void>): Promise<Rounds> => {
  // one unrecorded round warms the code paths up
  await round({ herd: [], baseline: [], floor: [], requests: [] })
  const rounds: Rounds = { herd: [], baseline: [], floor: [], requests: [] }
  for (let i = 0; i < count; i++) await round(rounds)
  return rounds
}

export const herd = async (context: Context): Promise<PartResult> => {
  const { herd: sizes, herdRounds } = context.sizes
  const refreshToken = await obtainRefreshToken(context.emulator)
  const figures = []
  const data: Array<unknown> = []
  const label = (k: number) => `K = ${k.toLocaleString("en-US")}`
  for (const k of sizes) {
    context.log(`  herd K = ${k}`)
    const effect = await run(herdRounds, (rounds) => effectRound(context, k, rounds))
    const promise = await run(herdRounds, (rounds) => promiseRound(context, k, rounds))
    const google = await run(herdRounds, (rounds) => googleRound(context, refreshToken, k, rounds))
    data.push({ k, effect, promise, googleAuthLibrary: google })
    const max = (values: ReadonlyArray<number>) => Math.max(...values)
    figures.push(
      figure(
        {
          label: `Effect API ${label(k)}: token requests (max of rounds)`,
          value: max(effect.requests),
          unit: "requests"
        },
        { target: { on: "value", op: "==", limit: 1 } }
      ),
      figure(
        { label: `Effect API ${label(k)}: wall time`, value: median(effect.herd), unit: "ms" },
        {
          baseline: { label: "cold fetch + K cached fibers", value: median(effect.baseline), unit: "ms" },
          ratio: ratioOf(effect.herd, effect.baseline),
          ...(k <= 1_000 ? { target: { on: "ratio", op: "<=", limit: 1.5 } as const } : {})
        }
      ),
      figure(
        {
          label: `Effect API ${label(k)}: wall time over the Effect-only floor`,
          value: median(effect.herd),
          unit: "ms"
        },
        {
          baseline: {
            label: "K fibers awaiting one Deferred a cold fetch completes",
            value: median(effect.floor),
            unit: "ms"
          },
          ratio: ratioOf(effect.herd, effect.floor),
          ...(k === 10_000 ? { target: { on: "ratio", op: "<=", limit: 1.1 } as const } : {})
        }
      ),
      figure(
        {
          label: `Promise facade ${label(k)}: token requests (max of rounds)`,
          value: max(promise.requests),
          unit: "requests"
        },
        { target: { on: "value", op: "==", limit: 1 } }
      ),
      figure(
        { label: `Promise facade ${label(k)}: wall time`, value: median(promise.herd), unit: "ms" },
        {
          baseline: { label: "one cold call", value: median(promise.baseline), unit: "ms" },
          ratio: ratioOf(promise.herd, promise.baseline),
          ...(k === 10_000 ? { target: { on: "ratio", op: "<=", limit: 1.2 } as const } : {})
        }
      ),
      figure(
        {
          label: `google-auth-library ${label(k)}: wall time (${max(google.requests)} token req.)`,
          value: median(google.herd),
          unit: "ms"
        },
        {
          baseline: { label: "its cold call", value: median(google.baseline), unit: "ms" },
          ratio: ratioOf(google.herd, google.baseline)
        }
      )
    )
  }
  return {
    title: "Thundering herd (cold token, 20 ms token latency)",
    figures,
    notes: [
      `${herdRounds} rounds per K after one warm-up round, each on fresh providers sharing one connection pool; herd and baselines rotate which goes first, each after gc()`,
      "the Effect-only floor: one cold fetch on a fresh provider completes a Deferred that K - 1 other fibers await, in one Effect.all as the herd (K fibers); targets: ≤ 1.5× cold + cached for K ≤ 1,000, ≤ 1.1× the floor at K = 10,000",
      "the emulator runs in a worker thread and adds a fixed 20 ms latency to every token response",
      "google-auth-library renews with a refresh token (it has no client credentials grant); it is shown for reference"
    ],
    data
  }
}
