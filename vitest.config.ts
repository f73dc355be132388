import { availableParallelism } from "node:os"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import { slowFirst } from "./scripts/test/slowFirst.mjs"
import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

/**
 * Test files run side by side. Most suites spend their time waiting (token expiries, child processes, Chromium,
 * redis-server, npm), not computing, so on a 2-core machine vitest's default (cores − 1 = one file at a time, every
 * suite queued behind the others) wastes most of the run. Workers: cores + 1 (3 here; 4 made the CPU-heavy suites,
 * running together on a loaded machine, slower than the waiting they saved); SERVICE_SDK_TEST_WORKERS sets it. (In a multi-project run vitest takes the worker count and
 * `fileParallelism` from this root config only, never from a project.) The measurements: packages/bench/results/measurements.md,
 * "The test suite".
 */
const workers = Number(process.env.SERVICE_SDK_TEST_WORKERS) || availableParallelism() + 1

/**
 * Files known to take the longest start first, so that they do not become the tail of the run (vitest otherwise
 * orders by the durations it cached from the last run, or by file size on a fresh clone).
 */
const slowFirstHints = [
  "packages/redis/test/faults/failover",
  "packages/bench/test/quick.test.ts",
  "packages/emulator/test/integration/userTokens.test.ts",
  "scripts/test/consumer",
  "examples/web-app/test/browser.test.ts",
  "packages/redis/test/faults/",
  "packages/cli/test/"
]

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    return slowFirst(slowFirstHints, await super.sort(files))
  }
}

export default defineConfig({
  test: {
    projects,
    pool: "forks",
    maxWorkers: workers,
    minWorkers: 1,
    sequence: { sequencer: SlowFirstSequencer }
  }
})
