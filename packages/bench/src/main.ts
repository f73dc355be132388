/**
 * `npm run bench [-- --quick] [-- --out FILE] [-- --only 1,3]`: the Effect 3 line's benchmark parts (1-12 and 16), a
 * table per part, a summary of the targets, and the JSON (`results/latest.json` for a full run; a quick run writes
 * only with `--out`); then the two Effect lines side by side (parts 13-15, `packages/effect4/bench`, JSON in
 * `results/effect4.json`).
 * Every figure is a ratio against something measured in the same run.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { Context, Sizes } from "./internal/context.js"
import { startWorkerEmulator } from "./internal/emulator.js"
import type { Settings } from "./internal/harness.js"
import { machine, waitForQuiet } from "./internal/machine.js"
import { cachedEffect } from "./internal/parts/cachedEffect.js"
import { cachedPromise } from "./internal/parts/cachedPromise.js"
import { expiryUnderLoad } from "./internal/parts/expiryUnderLoad.js"
import { fleet } from "./internal/parts/fleet.js"
import { herd } from "./internal/parts/herd.js"
import { memory } from "./internal/parts/memory.js"
import type { PartResult } from "./internal/parts/part.js"
import { peers } from "./internal/parts/peers.js"
import { promisePackage } from "./internal/parts/promisePackage.js"
import { requestOverhead } from "./internal/parts/requestOverhead.js"
import { sharedFile } from "./internal/parts/sharedFile.js"
import { startup } from "./internal/parts/startup.js"
import { usersMemory } from "./internal/parts/usersMemory.js"
import { usersRenewals } from "./internal/parts/usersRenewals.js"
import { formatPart, formatSummary, type PartReport, targets } from "./internal/report.js"
import { effect4SideBySide } from "./internal/sideBySide.js"

const TOKEN_LATENCY_MS = 20

const FULL: { readonly settings: Settings; readonly sizes: Sizes } = {
  settings: { rounds: 5, time: 300, warmupTime: 100, iterations: 8 },
  sizes: {
    herd: [10, 100, 1_000, 10_000],
    herdRounds: 7,
    peerHerd: 1_000,
    peerHerdRounds: 3,
    memoryCalls: 1_000_000,
    memoryRequests: 100_000,
    startupRuns: 7,
    coldImportRuns: 15,
    quietWaitMs: 10_000
  }
}

const QUICK: typeof FULL = {
  settings: { rounds: 2, time: 20, warmupTime: 10, iterations: 2 },
  sizes: {
    herd: [10, 1_000],
    herdRounds: 1,
    peerHerd: 50,
    peerHerdRounds: 1,
    memoryCalls: 20_000,
    memoryRequests: 400,
    startupRuns: 1,
    coldImportRuns: 1,
    quietWaitMs: 100
  }
}

const PARTS: ReadonlyArray<readonly [number, (context: Context) => Promise<PartResult>]> = [
  [1, cachedEffect],
  [2, cachedPromise],
  [3, herd],
  [4, requestOverhead],
  [5, memory],
  [6, peers],
  [7, startup],
  [8, fleet],
  [9, expiryUnderLoad],
  [10, usersMemory],
  [11, sharedFile],
  [12, promisePackage],
  // 13-15: the Effect 4 line side by side (below)
  [16, usersRenewals]
]

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    out: { type: "string" },
    only: { type: "string" }
  }
})
const quick = values.quick === true
const { settings, sizes } = quick ? QUICK : FULL
const only = values.only === undefined ? undefined : new Set(values.only.split(",").map(Number))
const out = values.out ?? (quick ? undefined : fileURLToPath(new URL("../results/latest.json", import.meta.url)))
const log = (line: string) => process.stderr.write(`${line}\n`)

const started = performance.now()
const host = machine()
const emulatorOptions = { tokenLatencyMs: TOKEN_LATENCY_MS, tokenLifetime: 3600, autoApprove: true }
console.log(
  [
    `service-sdk benchmarks (${quick ? "quick mode: a smoke test, not figures to quote" : "full run"})`,
    `machine: ${host.cpu}, ${host.cores} cores, ${host.memoryGiB} GiB, ${host.platform}, node ${host.node}, ${host.date}`,
    `emulator: in a worker thread, with a fixed ${TOKEN_LATENCY_MS} ms latency added to every token response`,
    `harness: tinybench, ${settings.rounds} interleaved rounds of ${settings.time} ms sampling after ${settings.warmupTime} ms warm-up per task; medians, spread = range of per-round ratios`,
    ""
  ].join("\n")
)

const emulator = await startWorkerEmulator(emulatorOptions)
const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici)
const reports: Array<PartReport> = []
let failure: unknown
try {
  const http = await runtime.runPromise(HttpClient.HttpClient)
  const context: Context = { quick, settings, sizes, emulator, http, log }
  for (const [id, run] of PARTS) {
    if (only !== undefined && !only.has(id)) continue
    const quiet = await waitForQuiet(sizes.quietWaitMs)
    log(`part ${id}...`)
    const partStart = performance.now()
    const result = await run(context)
    const report: PartReport = { id, quiet, seconds: (performance.now() - partStart) / 1000, ...result }
    reports.push(report)
    console.log(`${formatPart(report)}\n`)
  }
} catch (error) {
  failure = error
} finally {
  await runtime.dispose()
  await emulator.close()
}

const lines = targets(reports)
console.log(formatSummary(lines))
const seconds = (performance.now() - started) / 1000
console.log(`\n${reports.length} parts in ${seconds.toFixed(0)} s`)
if (out !== undefined) {
  const document = {
    mode: quick ? "quick" : "full",
    command: quick ? "npm run bench -- --quick" : "npm run bench",
    machine: host,
    emulator: { thread: "worker", ...emulatorOptions },
    settings,
    sizes,
    durationSeconds: Math.round(seconds),
    summary: { targets: lines.length, held: lines.filter((line) => line.pass).length },
    targets: lines,
    parts: reports
  }
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`)
  console.log(`results written to ${out}`)
}
if (failure !== undefined) {
  console.error(failure)
  process.exitCode = 1
}

// The Effect 4 line beside the Effect 3 line (parts 13-15): one process on the Effect 4 line's Node, which measures
// both lines (this process's Node may be older than the Effect 4 line admits).
const sideBySide = effect4SideBySide({ quick, out: values.out, only })
if (sideBySide !== 0) process.exitCode = 1
