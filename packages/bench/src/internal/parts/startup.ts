/**
 * Part 7. Start-up: a cold `node` process that imports `service-sdk` or `service-sdk/promise`, the CLI's `--help`,
 * and google-auth-library's import, against a bare `node` process: wall time (spawn to exit) and the heap in use at
 * exit. Also `service-sdk/promise` as an app ships it, bundled by esbuild (minified), against google-auth-library's
 * import. Targets: the CLI's `--help` within 3× bare node, the bundled facade within 2× google-auth-library's import.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildSync } from "esbuild"
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

/** `import "@service-sdk/effect/promise"` in an app bundled by esbuild (one minified file), written under `dir`. */
const bundledFacade = (dir: string): Row => {
  const entry = join(dir, "app.mjs")
  const outfile = join(dir, "app.bundle.mjs")
  // re-exported, so that the bundle keeps every export (an unused import would be tree-shaken away)
  writeFileSync(entry, `export * from "@service-sdk/effect/promise"\n`)
  buildSync({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    minify: true,
    nodePaths: [join(benchDir, "node_modules"), join(benchDir, "..", "..", "node_modules")],
    banner: { js: 'import{createRequire as __cr}from"node:module";const require=__cr(import.meta.url);' },
    logLevel: "error"
  })
  return { label: `import "@service-sdk/effect/promise", bundled (esbuild)`, args: [outfile] }
}

const rows = (dir: string): ReadonlyArray<Row> => [
  { label: "bare node", args: ["--input-type=module", "-e", ""] },
  importing("@service-sdk/effect"),
  importing("@service-sdk/effect/promise"),
  bundledFacade(dir),
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
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"))
  try {
    return await measureStartup(context, rows(dir))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const TARGETS: Readonly<Record<string, number>> = { "service-sdk --help (CLI)": 3 }

const measureStartup = async (context: Context, ROWS: ReadonlyArray<Row>): Promise<PartResult> => {
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
          ratio: ratioOf(wall[index]!, wall[0]!),
          ...(TARGETS[row.label] === undefined
            ? {}
            : { target: { on: "ratio", op: "<=", limit: TARGETS[row.label]! } as const })
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
  const google = ROWS.length - 1
  const bundled = ROWS.findIndex((row) => row.label.includes("bundled"))
  const versusGoogle = figure(
    {
      label: `${ROWS[bundled]!.label} vs google-auth-library's import: wall time`,
      value: median(wall[bundled]!),
      unit: "ms"
    },
    {
      baseline: { label: ROWS[google]!.label, value: median(wall[google]!), unit: "ms" },
      ratio: ratioOf(wall[bundled]!, wall[google]!),
      target: { on: "ratio", op: "<=", limit: 2 }
    }
  )
  return {
    title: "Start-up (cold node processes)",
    figures: [...figures, versusGoogle],
    notes: [
      `${runs} cold process(es) per row${context.quick ? "" : " after one unrecorded run each"}, interleaved; wall time is spawn to exit, heap is heapUsed when the process exits; the CLI bin is its esbuild bundle (packages/cli/scripts/bundle.mjs)`
    ],
    data: ROWS.map((row, index) => ({ label: row.label, wallMs: wall[index], heapMB: heap[index] }))
  }
}
