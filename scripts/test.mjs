#!/usr/bin/env node
// `npm test`: type-check (tsc -b), lint (biome), the API reference (npm run docs), every vitest project, then the bench smoke test.
// Ends with one line `tests: N passed, M failed, K skipped`; exits non-zero on any failure or when N is 0.
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const bin = (name) => join(root, "node_modules", ".bin", name)
const run = (label, command, args) => {
  console.log(`\n> ${label}: ${[command.replace(`${root}/`, ""), ...args].join(" ")}`)
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: process.env })
  return result.status === 0
}

const extraArgs = process.argv.slice(2)
const results = join(root, ".vitest-results.json")
rmSync(results, { force: true })

const steps = []
steps.push(["type-check", run("type-check", bin("tsc"), ["-b"])])
steps.push(["lint", run("lint", bin("biome"), ["check", "."])])
// the API reference (TypeDoc); fails on a public export without a summary or a main entry point without @example
steps.push(["docs", run("docs", process.execPath, [join(root, "scripts", "docs", "build.mjs")])])
const vitestOk = run("vitest", bin("vitest"), [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${results}`,
  ...extraArgs
])
steps.push(["vitest", vitestOk])

let passed = 0
let failed = 0
let skipped = 0
if (existsSync(results)) {
  const report = JSON.parse(readFileSync(results, "utf8"))
  passed = report.numPassedTests ?? 0
  failed = report.numFailedTests ?? 0
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
  // a suite that failed to load has no tests in the counts: count it as a failure
  failed += (report.testResults ?? []).filter(
    (suite) => suite.status === "failed" && suite.assertionResults.length === 0
  ).length
}
const failedSteps = steps.filter(([, ok]) => !ok).map(([name]) => name)
if (failedSteps.length > 0) console.log(`\nfailed steps: ${failedSteps.join(", ")}`)
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failedSteps.length > 0 || failed > 0 || passed === 0 ? 1 : 0)
