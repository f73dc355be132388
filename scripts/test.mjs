#!/usr/bin/env node
// `npm test`: type-check (tsc -b, both lines), then every vitest project (the bench smoke test included) with lint
// (biome) and the API reference (npm run docs) running beside it: the Effect 3 line's unit files first, sharing modules,
// then its other files, isolated (scripts/test/slowFiles.mjs). The consumer tests run on the supported Node that
// the Effect 4 line installs (scripts/effect4.mjs), beside the rest; then the Effect 4 line's suites (vitest 5, on
// that Node). The consumer tests of both lines install the tarballs of one `npm run pack` (scripts/pack.mjs), made
// here beside the Effect 3 line's suites (SERVICE_SDK_PACKED names its packages.json). With `--project` arguments only
// the root vitest runs, with them.
// Ends with one line `tests: N passed, M failed, K skipped`; exits non-zero on any failure or when N is 0.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { summarize } from "./conformance.mjs"
import { slowFiles, unitProjects } from "./test/slowFiles.mjs"
import { effect4Dir, effect4Node, effect4Vitest } from "./effect4.mjs"

const root = join(import.meta.dirname, "..")
const bin = (name) => join(root, "node_modules", ".bin", name)
const started = performance.now()
const show = (command, args) => [command.replace(`${root}/`, ""), ...args].join(" ")
const run = (label, command, args) => {
  console.log(`\n> ${label}: ${show(command, args)}`)
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: process.env })
  return result.status === 0
}
/**
 * Runs beside vitest with its output held back, printed when it is done (so it does not interleave); `quiet`: printed
 * only on a failure.
 */
const runBeside = (label, command, args, quiet = false) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: process.env })
    let output = ""
    child.stdout.on("data", (chunk) => {
      output += chunk
    })
    child.stderr.on("data", (chunk) => {
      output += chunk
    })
    child.on("close", (code) => {
      const shown = quiet && code === 0 ? "done" : output.trimEnd()
      console.log(`\n> ${label}: ${show(command, args)}\n${shown}`)
      resolve(code === 0)
    })
  })

/**
 * `npm run test:fast` (`--fast`): the inner loop. Unit and emulator tests of both lines, no OS-process, browser,
 * Redis, bundle, install or docs suites (`scripts/test/slowFiles.mjs`; those run in `npm test`).
 */
const fast = process.argv.includes("--fast")
const excludeSlowFiles = slowFiles.flatMap((glob) => ["--exclude", glob])
/**
 * Unit files share their worker's loaded modules (`--no-isolate`): Effect and the sources are imported once per
 * worker, not once per file (an Effect 3 file spent about as long importing `effect` and `@effect/platform` as running
 * its tests). On the Effect 3 line's vitest 3, only with a fixed pool (`minWorkers` = `maxWorkers`, the config's
 * count): with `minWorkers: 1` the pool ends idle workers mid-run, which fails the run with "Terminating worker
 * thread". `npm test` shares modules on the Effect 3 line's unit files only: its slow files, and every file of the
 * Effect 4 line, stay isolated (a file that passes only because another ran first fails there; one that leaks state
 * into another fails here).
 */
const shareModules = "--no-isolate"
const workers = Number(process.env.SERVICE_SDK_TEST_WORKERS) || availableParallelism() + 1
const unitArgs = [
  ...unitProjects.map((name) => `--project=${name}`),
  shareModules,
  `--minWorkers=${workers}`,
  `--maxWorkers=${workers}`,
  ...excludeSlowFiles
]
const extraArgs = fast ? [] : process.argv.slice(2)
// a file filter (`npm test -- name`) applies to both of the Effect 3 line's runs, and may match files of only one
const filtered = extraArgs.some((arg) => !arg.startsWith("-"))
const results = join(root, ".vitest-results.json")
const unitResults = join(root, ".vitest-results.units.json")

const steps = []
// first: the build that some suites run (the CLI's bin, fleet workers on the built packages)
steps.push(["type-check", run("type-check", bin("tsc"), ["-b"])])
// lint and the API reference (TypeDoc; fails on a public export without a summary or a main entry point without
// @example) need no test and no test needs them: they run beside vitest
const beside = [
  ["lint", runBeside("lint", bin("biome"), ["check", "."])],
  ...(fast ? [] : [["docs", runBeside("docs", process.execPath, [join(root, "scripts", "docs", "build.mjs")])]])
]
const vitest = (label, node, script, args, cwd, output, env = {}) =>
  new Promise((resolve) => {
    const all = ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${output}`, ...args]
    console.log(`\n> ${label}: ${show(node, [script, ...all])}`)
    spawn(node, [script, ...all], { cwd, stdio: "inherit", env: { ...process.env, ...env } })
      // a missing Node or vitest (packages/effect4 not installed: run npm install) fails the step, not the script
      .on("error", (error) => {
        console.log(`\n> ${label} could not start: ${error.message} (run npm install)`)
        resolve(false)
      })
      .on("close", (code) => resolve(code === 0))
  })
const rootVitest = join(root, "node_modules", "vitest", "vitest.mjs")
const consumerResults = join(root, ".vitest-results.consumer.json")
const effect4Results = join(root, ".vitest-results.effect4.json")
for (const file of [results, unitResults, consumerResults, effect4Results]) rmSync(file, { force: true })
const everything = !fast && !extraArgs.some((arg) => arg === "--project" || arg.startsWith("--project="))
// `npm run pack` once (both lines: `tsc -b`, then `npm pack` with the bundling prepacks) for the consumer tests of
// both lines (each packed both lines for itself before: three packs a run); SERVICE_SDK_PACKED names its result
const packs = everything ? mkdtempSync(join(tmpdir(), "service-sdk-test-packs-")) : ""
const packed = everything
  ? runBeside(
      "pack for the consumer tests",
      process.execPath,
      [join(root, "scripts", "pack.mjs"), "--out", packs],
      true
    )
  : Promise.resolve(true)
const packedEnv = packed.then((ok) => (ok && everything ? { SERVICE_SDK_PACKED: join(packs, "packages.json") } : {}))
// the consumer tests (npm installs, mostly waiting) on the supported Node, beside the Effect 3 line's suites; with
// them the registry test (project registry-consumer: verdaccio needs Node 22), which publishes the same tarballs
const consumerRun = everything
  ? packedEnv.then((env) =>
      vitest(
        "consumer tests (supported Node)",
        effect4Node,
        rootVitest,
        ["--project=*consumer"],
        root,
        consumerResults,
        env
      )
    )
  : Promise.resolve(true)
// the Effect 3 line's unit files first, sharing modules (the inner loop's run); then, in `npm test`, every other file of
// that line, isolated (SERVICE_SDK_TEST_SLOW_FILES: the unit projects take only their slow files)
const unitsOk =
  fast || everything
    ? await vitest(
        "unit files (Effect 3 line)",
        process.execPath,
        rootVitest,
        [...unitArgs, ...extraArgs, ...(filtered ? ["--passWithNoTests"] : [])],
        root,
        unitResults
      )
    : true
const vitestOk = fast
  ? true
  : await vitest(
      "vitest",
      process.execPath,
      rootVitest,
      [...(everything ? ["--project=!*consumer"] : []), ...extraArgs, ...(filtered ? ["--passWithNoTests"] : [])],
      root,
      results,
      everything ? { SERVICE_SDK_TEST_SLOW_FILES: "1" } : {}
    )
if (fast) {
  steps.push([
    "vitest (Effect 4 line)",
    await vitest(
      "Effect 4 line",
      effect4Node,
      effect4Vitest,
      ["--project=effect4-service-sdk", shareModules, ...excludeSlowFiles],
      effect4Dir,
      effect4Results
    )
  ])
}
if (everything) {
  steps.push(["pack", await packed])
  steps.push(["consumer tests", await consumerRun])
  steps.push([
    "vitest (Effect 4 line)",
    await vitest("Effect 4 line", effect4Node, effect4Vitest, [], effect4Dir, effect4Results, await packedEnv)
  ])
  rmSync(packs, { recursive: true, force: true })
}
for (const [name, done] of beside) steps.push([name, await done])
steps.push(["unit files", unitsOk])
steps.push(["vitest", vitestOk])

let passed = 0
let failed = 0
let skipped = 0
const failures = []
const firstLine = (text) =>
  String(text ?? "")
    .split("\n")
    .find((line) => line.trim() !== "") ?? "(no message)"
for (const file of [unitResults, results, consumerResults, effect4Results]) {
  if (!existsSync(file)) continue
  const report = JSON.parse(readFileSync(file, "utf8"))
  passed += report.numPassedTests ?? 0
  failed += report.numFailedTests ?? 0
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
  // a suite that failed to load has no tests in the counts: count it as a failure
  failed += (report.testResults ?? []).filter(
    (suite) => suite.status === "failed" && suite.assertionResults.length === 0
  ).length
  for (const suite of report.testResults ?? []) {
    const file = suite.name.replace(`${root}/`, "")
    if (suite.status === "failed" && suite.assertionResults.length === 0)
      failures.push(`${file}: ${firstLine(suite.message)}`)
    for (const test of suite.assertionResults ?? []) {
      if (test.status === "failed") failures.push(`${file} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`)
    }
  }
}
// the conformance scenarios ran in both lines' suites: the same comparison as `npm run test:conformance`
const bothLines = everything || fast
if (bothLines) {
  const report = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined)
  const conformance = summarize(report(unitResults), report(effect4Results))
  if (conformance.differ.length > 0)
    console.log(`\nlines that differ:\n${conformance.differ.map((id) => `  ${id}`).join("\n")}`)
  console.log(`\n${conformance.line}`)
  steps.push(["conformance", conformance.ok])
}
// the failed tests again at the end, where a log's tail shows them
if (failures.length > 0) console.log(`\nfailed tests:\n${failures.map((line) => `  ${line}`).join("\n")}`)
const failedSteps = steps.filter(([, ok]) => !ok).map(([name]) => name)
if (failedSteps.length > 0) console.log(`\nfailed steps: ${failedSteps.join(", ")}`)
const seconds = Math.round((performance.now() - started) / 1000)
console.log(`${fast ? "npm run test:fast" : "npm test"} took ${Math.floor(seconds / 60)} min ${seconds % 60} s`)
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failedSteps.length > 0 || failed > 0 || passed === 0 ? 1 : 0)
