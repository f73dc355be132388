#!/usr/bin/env node
/**
 * `npm run test:conformance`: the conformance scenarios (`packages/conformance`) on both Effect lines, each through its
 * driver (`test/conformance/` of each line), then one comparison. Ends with exactly one line
 *
 *   conformance: N scenarios × 2 lines, M differ
 *
 * (M: scenarios that pass on one line and not on the other, or ran on one line only). Exits non-zero when a scenario
 * fails on either line. `npm test` prints the same line from its own reports ({@link summarize}).
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(import.meta.dirname, "..")
const PREFIX = "conformance:"

/** The scenarios of one vitest JSON report: id → "passed" | "failed" (skipped ones are left out). */
export const scenarioResults = (report) => {
  const results = new Map()
  for (const suite of report?.testResults ?? []) {
    for (const test of suite.assertionResults ?? []) {
      if (!(test.ancestorTitles ?? []).some((title) => title.startsWith(PREFIX))) continue
      if (test.status === "passed" || test.status === "failed") results.set(test.title, test.status)
    }
  }
  return results
}

/** The comparison of the two lines' reports: `{ line, ok, failed: [...], differ: [...] }`. */
export const summarize = (effect3Report, effect4Report) => {
  const lines = { effect3: scenarioResults(effect3Report), effect4: scenarioResults(effect4Report) }
  const ids = [...new Set([...lines.effect3.keys(), ...lines.effect4.keys()])].sort()
  const differ = ids.filter((id) => lines.effect3.get(id) !== lines.effect4.get(id))
  const failed = ids.flatMap((id) =>
    Object.entries(lines)
      .filter(([, results]) => results.get(id) !== "passed")
      .map(([line, results]) => `${line}: ${id} (${results.get(id) ?? "did not run"})`)
  )
  return {
    line: `conformance: ${ids.length} scenarios × 2 lines, ${differ.length} differ`,
    ok: ids.length > 0 && failed.length === 0,
    failed,
    differ
  }
}

const readReport = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined)

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { effect4Dir, effect4Node, effect4Vitest } = await import("./effect4.mjs")
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-conformance-"))
  const reports = { effect3: join(dir, "effect3.json"), effect4: join(dir, "effect4.json") }
  const vitest = (node, script, cwd, project, output) =>
    spawnSync(
      node,
      [
        script,
        "run",
        `--project=${project}`,
        "test/conformance",
        "--reporter=default",
        "--reporter=json",
        `--outputFile.json=${output}`
      ],
      { cwd, stdio: "inherit" }
    )
  vitest(process.execPath, join(root, "node_modules", "vitest", "vitest.mjs"), root, "service-sdk", reports.effect3)
  vitest(effect4Node, effect4Vitest, effect4Dir, "effect4-service-sdk", reports.effect4)
  const summary = summarize(readReport(reports.effect3), readReport(reports.effect4))
  rmSync(dir, { recursive: true, force: true })
  if (summary.failed.length > 0) console.log(`\nfailed scenarios:\n${summary.failed.map((f) => `  ${f}`).join("\n")}`)
  if (summary.differ.length > 0) console.log(`\nlines that differ:\n${summary.differ.map((f) => `  ${f}`).join("\n")}`)
  console.log(`\n${summary.line}`)
  process.exit(summary.ok ? 0 : 1)
}
