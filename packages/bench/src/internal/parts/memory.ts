/**
 * Part 5. Memory: the heap retained after `gc()` following many cached `getAccessToken` calls (Effect API and
 * facade) and client requests, over the heap after the same setup and a warm-up.
 */
import * as Effect from "effect/Effect"
import { type Context, makeAsyncProvider, makeProvider, repeat, repeatAsync } from "../context.js"
import { gc } from "../machine.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"
import { gets, makeClient } from "./requestOverhead.js"

const MB = 1024 * 1024
const CHUNK = 10_000
const REQUEST_CHUNK = 1_000

const heapUsed = async () => {
  await gc()
  return process.memoryUsage().heapUsed
}

export const memory = async (context: Context): Promise<PartResult> => {
  const { memoryCalls: calls, memoryRequests: requests } = context.sizes
  const provider = await makeProvider(context)
  const facade = makeAsyncProvider(context)
  await Effect.runPromise(provider.getAccessToken)
  await facade.getAccessToken()
  const client = await makeClient(context, provider)

  const work = async (callCount: number, requestCount: number) => {
    const chunk = repeat(provider.getAccessToken, Math.min(CHUNK, callCount))
    for (let done = 0; done < callCount; done += CHUNK) await Effect.runPromise(chunk)
    await repeatAsync(() => facade.getAccessToken(), callCount)
    for (let done = 0; done < requestCount; done += REQUEST_CHUNK) {
      await Effect.runPromise(gets(client.http, Math.min(REQUEST_CHUNK, requestCount - done)))
    }
  }

  try {
    // the same work at a small scale first: lazy initialisation and compiled code are not "retained"
    await work(Math.min(CHUNK, calls), Math.min(REQUEST_CHUNK, requests))
    const before = await heapUsed()
    const start = performance.now()
    await work(calls, requests)
    const seconds = (performance.now() - start) / 1000
    const after = await heapUsed()
    const retained = (after - before) / MB
    return {
      title: "Memory retained",
      figures: [
        figure(
          {
            label: `heap retained after gc(): ${calls.toLocaleString("en-US")} cached calls × 2 APIs + ${requests.toLocaleString("en-US")} requests`,
            value: retained,
            unit: "MB"
          },
          {
            baseline: { label: "heap before, after gc()", value: before / MB, unit: "MB" },
            ratio: { ratio: after / before, min: after / before, max: after / before },
            target: { on: "value", op: "<", limit: 2 }
          }
        )
      ],
      notes: [
        `${calls.toLocaleString("en-US")} cached getAccessToken calls through the Effect API (${CHUNK.toLocaleString("en-US")} per runPromise) and as many through the facade, then ${requests.toLocaleString("en-US")} ServiceClient GETs (${seconds.toFixed(1)} s in all); ratio = heap after over heap before`
      ],
      data: { calls, requests, beforeBytes: before, afterBytes: after, seconds }
    }
  } finally {
    await facade.close()
  }
}
