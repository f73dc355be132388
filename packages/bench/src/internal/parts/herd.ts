/**
 * Part 3. The thundering herd: K concurrent callers on a provider whose cache is empty (a cold fetch, which the
 * emulator answers after its fixed 20 ms latency, so every caller starts before it completes). Counts the token
 * requests the emulator answered (must be 1) and the wall time, each round on a fresh provider.
 *
 * - Effect API: K fibers in one `Effect.all`, against one cold fetch plus the same K fibers doing cached calls.
 * - Promise facade: K concurrent `getAccessToken()` Promises, against one cold call (google-auth-library beside it).
 */
import * as Effect from "effect/Effect"
import type { TokenProviderService } from "service-sdk"
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

/** Wall time of `run` and the token requests the emulator answered meanwhile. */
const counted = async (context: Context, run: () => Promise<unknown>) => {
  const before = await context.emulator.tokenRequests()
  const { ms } = await timed(run)
  return { ms, requests: (await context.emulator.tokenRequests()) - before }
}

interface Rounds {
  readonly herd: Array<number>
  readonly baseline: Array<number>
  readonly requests: Array<number>
}

/** One round: the herd and its baseline, alternating which goes first; each starts on a collected heap. */
const alternate = async (
  rounds: Rounds,
  herd: () => Promise<{ readonly ms: number; readonly requests: number }>,
  baseline: () => Promise<number>
) => {
  const runHerd = async () => {
    await gc(2)
    const result = await herd()
    rounds.herd.push(result.ms)
    rounds.requests.push(result.requests)
  }
  const runBaseline = async () => {
    await gc(2)
    rounds.baseline.push(await baseline())
  }
  if (rounds.herd.length % 2 === 0) {
    await runHerd()
    await runBaseline()
  } else {
    await runBaseline()
    await runHerd()
  }
}

const effectRound = async (context: Context, k: number, rounds: Rounds) => {
  const herdProvider = await makeProvider(context)
  const coldProvider = await makeProvider(context)
  await alternate(
    rounds,
    () => counted(context, () => Effect.runPromise(fibers(herdProvider, k))),
    async () => {
      const cold = await timed(() => Effect.runPromise(coldProvider.getAccessToken))
      const cached = await timed(() => Effect.runPromise(fibers(coldProvider, k)))
      return cold.ms + cached.ms
    }
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
  await round({ herd: [], baseline: [], requests: [] })
  const rounds: Rounds = { herd: [], baseline: [], requests: [] }
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
          target: { on: "ratio", op: "<=", limit: 1.5 }
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
      `${herdRounds} rounds per K after one warm-up round, each on fresh providers sharing one connection pool; herd and baseline alternate which goes first, each after gc()`,
      "the emulator runs in a worker thread and adds a fixed 20 ms latency to every token response",
      "google-auth-library renews with a refresh token (it has no client credentials grant); it is shown for reference"
    ],
    data
  }
}
