/**
 * Part 1. The cached token path through the Effect API: `getAccessToken` on a valid cached token, N calls in one
 * `Effect.runPromise`, against the floor measured the same way (an Effect doing only `Ref.get`, `Clock`, compare).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { type Context, makeProvider, repeat, repeatAsync } from "../context.js"
import { measure, ratioOf } from "../harness.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

const N = 1_000
const PER_CALL = 100

export const cachedEffect = async (context: Context): Promise<PartResult> => {
  const provider = await makeProvider(context)
  await Effect.runPromise(provider.getAccessToken)

  // the same shape as the provider's memo: an optional entry with the instant it goes stale
  const memo = Ref.unsafeMake(
    Option.some({ token: Redacted.make("floor-token"), staleAt: Effect.runSync(Clock.currentTimeMillis) + 3_600_000 })
  )
  const floor = Effect.flatMap(Ref.get(memo), (entry) =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      Option.isSome(entry) && now < entry.value.staleAt ? entry.value.token : undefined
    )
  )
  const sdkBatch = repeat(provider.getAccessToken, N)
  const floorBatch = repeat(floor, N)
  const [sdk, base, perCall] = await measure(
    [
      { name: "getAccessToken", batch: N, async: true, fn: () => Effect.runPromise(sdkBatch) },
      { name: "floor", batch: N, async: true, fn: () => Effect.runPromise(floorBatch) },
      {
        name: "runPromise per call",
        batch: PER_CALL,
        async: true,
        fn: () => repeatAsync(() => Effect.runPromise(provider.getAccessToken), PER_CALL)
      }
    ],
    context.settings
  )
  const baseline = { label: "floor (Ref.get + Clock + compare)", value: base!.nsPerOp, unit: "ns/call" } as const
  return {
    title: "Cached token path, Effect API",
    figures: [
      figure(
        {
          label: `getAccessToken, ${N.toLocaleString("en-US")} calls per runPromise`,
          value: sdk!.nsPerOp,
          unit: "ns/call"
        },
        { baseline, ratio: ratioOf(sdk!.rounds, base!.rounds), target: { on: "ratio", op: "<=", limit: 1.5 } }
      ),
      figure(
        { label: "one Effect.runPromise per call (reference)", value: perCall!.nsPerOp, unit: "ns/call" },
        { baseline, ratio: ratioOf(perCall!.rounds, base!.rounds) }
      )
    ],
    notes: [
      `N = ${N} cached calls in one Effect.runPromise per sample; ${sdk!.samples} + ${base!.samples} samples over ${context.settings.rounds} interleaved rounds (worst relative MAD ${(Math.max(sdk!.relativeMad, base!.relativeMad) * 100).toFixed(1)} %)`
    ],
    data: { sdk, floor: base, perCall }
  }
}
