/**
 * Part 2. The cached token path through the Promise facade: `await provider.getAccessToken()` against
 * google-auth-library's `OAuth2Client.getAccessToken()` (credentials with a future `expiry_date`) and the naive class.
 */
import * as Effect from "effect/Effect"
import { type Context, makeAsyncProvider, makeProvider, repeatAsync } from "../context.js"
import { measure, ratioOf } from "../harness.js"
import { googleAuth, NaiveTokenCache } from "../peers.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"
import { wallClockMillis } from "../machine.js"

const N = 1_000

const opsPerSecond = (nsPerOp: number) => 1e9 / nsPerOp

export const cachedPromise = async (context: Context): Promise<PartResult> => {
  const facade = makeAsyncProvider(context)
  const token = await facade.getAccessToken()
  const google = googleAuth(context.emulator, { access_token: token })
  google.setCredentials(wallClockMillis() + 3_600_000)
  const naive = new NaiveTokenCache(context.emulator)
  await naive.get()
  const provider = await makeProvider(context)
  await Effect.runPromise(provider.getAccessToken)

  try {
    const [sdk, gal, hand, run] = await measure(
      [
        { name: "facade", batch: N, async: true, fn: () => repeatAsync(() => facade.getAccessToken(), N) },
        {
          name: "google-auth-library",
          batch: N,
          async: true,
          fn: () => repeatAsync(() => google.client.getAccessToken(), N)
        },
        { name: "naive", batch: N, async: true, fn: () => repeatAsync(() => naive.get(), N) },
        {
          name: "runPromise",
          batch: N,
          async: true,
          fn: () => repeatAsync(() => Effect.runPromise(provider.getAccessToken), N)
        }
      ],
      context.settings
    )
    const baseline = {
      label: "google-auth-library OAuth2Client.getAccessToken()",
      value: opsPerSecond(gal!.nsPerOp),
      unit: "ops/s"
    } as const
    // a throughput ratio: the baseline's time per call over the figure's
    const versus = (rounds: ReadonlyArray<number>) => ratioOf(gal!.rounds, rounds)
    return {
      title: "Cached token path, Promise facade",
      figures: [
        figure(
          { label: "await AsyncClientCredentials.getAccessToken()", value: opsPerSecond(sdk!.nsPerOp), unit: "ops/s" },
          { baseline, ratio: versus(sdk!.rounds), target: { on: "ratio", op: ">=", limit: 1 } }
        ),
        figure(
          { label: "naive hand-written cache class", value: opsPerSecond(hand!.nsPerOp), unit: "ops/s" },
          { baseline, ratio: versus(hand!.rounds) }
        ),
        figure(
          {
            label: "Effect.runPromise(getAccessToken) per call (no fast path)",
            value: opsPerSecond(run!.nsPerOp),
            unit: "ops/s"
          },
          { baseline, ratio: versus(run!.rounds) }
        )
      ],
      notes: [
        `ratio = throughput over google-auth-library's; ${N} sequential awaits per sample, ${context.settings.rounds} interleaved rounds`,
        `per call: facade ${sdk!.nsPerOp.toFixed(0)} ns, google-auth-library ${gal!.nsPerOp.toFixed(0)} ns, naive ${hand!.nsPerOp.toFixed(0)} ns, runPromise ${run!.nsPerOp.toFixed(0)} ns`
      ],
      data: { facade: sdk, googleAuthLibrary: gal, naive: hand, runPromisePerCall: run }
    }
  } finally {
    await facade.close()
  }
}
