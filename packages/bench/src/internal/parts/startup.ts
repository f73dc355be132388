/**
 * Part 7. Start-up: a cold `node` process that imports `service-sdk` or `service-sdk/promise`, the CLI's `--help`,
 * and google-auth-library's import, against a bare `node` process: wall time (spawn to exit) and the heap in use at
 * exit. No target yet.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Context } from "../context.js"
import { median, ratioOf } from "../harness.js"
import { type Figure, figure } from "../report.js"
import type { PartResult } from "./part.js"

/** packages/bench, where the imports resolve as they do for a user of the packages */
const benchDir = fileURLToPath(new URL("../../..", import.meta.url))
const cliBin = fileURLToPath(new URL("../../../../cli/bin/service-sdk.js", import.meta.url))

const MARK = "__bench_heap__="
// preloaded into every process, the bare one too: reports the heap in use when the process exits
const hook = `data:text/javascript,${encodeURIComponent(
  `process.on("exit", () => process.stderr.write("\\n${MARK}" + process.memoryUsage().heapUsed + "\\n"))`
)}`

interface Row {
  readonly label: string
  readonly args: ReadonlyArray<string>
}

const importing = (specifier: string): Row => ({
  label: `import "${specifier}"`,
  args: ["--input-type=module", "-e", `import * as m from ${JSON.stringify(specifier)}; void m`]
})

const ROWS: ReadonlyArray<Row> = [
  { label: "bare node", args: ["--input-type=module", "-e", ""] },
  importing("service-sdk"),
  importing("service-sdk/promise"),
  { label: "service-sdk --help (CLI)", args: [cliBin, "--help"] },
  importing("google-auth-library")
]

const once = (row: Row): { readonly ms: number; readonly heap: number } => {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, ["--import", hook, ...row.args], {
    cwd: benchDir,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" }
  })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  const heap = Number(/__bench_heap__=(\d+)/.exec(result.stderr ?? "")?.[1] ?? Number.NaN)
  if (result.status !== 0 || Number.isNaN(heap)) {
    throw new Error(`${row.label} failed (status ${result.status}): ${(result.stderr ?? "").slice(0, 500)}`)
  }
  return { ms, heap }
}

export const startup = async (context: Context): Promise<PartResult> => {
  const runs = context.sizes.startupRuns
  const wall = ROWS.map(() => [] as Array<number>)
  const heap = ROWS.map(() => [] as Array<number>)
  // one unrecorded run of each (file system cache; a full run only), then interleaved runs
  if (!context.quick) for (const row of ROWS) once(row)
  for (let run = 0; run < runs; run++) {
    for (const [index, row] of ROWS.entries()) {
      const result = once(row)
      wall[index]!.push(result.ms)
      heap[index]!.push(result.heap / (1024 * 1024))
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
  const figures: Array<Figure> = ROWS.slice(1).flatMap((row, offset) => {
    const index = offset + 1
    return [
      figure(
        { label: `${row.label}: wall time`, value: median(wall[index]!), unit: "ms" },
        {
          baseline: { label: "bare node", value: median(wall[0]!), unit: "ms" },
          ratio: ratioOf(wall[index]!, wall[0]!)
        }
      ),
      figure(
        { label: `${row.label}: heap at exit`, value: median(heap[index]!), unit: "MB" },
        {
          baseline: { label: "bare node", value: median(heap[0]!), unit: "MB" },
          ratio: ratioOf(heap[index]!, heap[0]!)
        }
      )
    ]
  })
  return {
    title: "Start-up (cold node processes)",
    figures,
    notes: [
      `${runs} cold process(es) per row${context.quick ? "" : " after one unrecorded run each"}, interleaved; wall time is spawn to exit, heap is heapUsed when the process exits; no target yet`
    ],
    data: ROWS.map((row, index) => ({ label: row.label, wallMs: wall[index], heapMB: heap[index] }))
  }
}
