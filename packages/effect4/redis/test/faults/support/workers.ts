/**
 * The worker programs of the Effect 4 line's Redis fault and failover suites. The suites themselves are the Effect 3
 * line's (`packages/redis/test/faults/support`, plain vitest and Promises); only the worker processes are per line:
 * the Effect 4 ones on this process' Node (the Effect 4 line's), the Effect 3 ones on the machine's Node (`node` on
 * PATH, or $SERVICE_SDK_EFFECT3_NODE) on the built 1.x packages, as in `mixedFleet.test.ts`.
 */
import { join } from "node:path"
import type { WorkerRunner } from "../../../../../redis/test/faults/support/failover.js"
import { effect3FailoverWorker } from "../../../../../redis/test/faults/support/failover.js"
import { effect3FaultWorker } from "../../../../../redis/test/faults/support/fleet.js"

const effect3Node = process.env.SERVICE_SDK_EFFECT3_NODE ?? "node"
const here = join(import.meta.dirname, "..")

export const failoverWorkers = {
  effect3: { ...effect3FailoverWorker, node: effect3Node },
  effect4: { node: process.execPath, script: join(here, "failoverWorker.mjs") }
} as const satisfies Record<string, WorkerRunner>

export const faultWorkers = {
  effect3: { ...effect3FaultWorker, node: effect3Node },
  effect4: { node: process.execPath, script: join(here, "faultWorker.mjs") }
} as const satisfies Record<string, WorkerRunner>
