import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import { slowFirst } from "../../scripts/test/slowFirst.mjs"

// The Effect 4 line's suites, on the Node this project installs (scripts/effect4.mjs). Workspace packages resolve to
// their TypeScript sources (the "source" export condition), so tests need no build.
const conditions = ["source", "import", "node", "default"]

const project = (name: string, test: Record<string, unknown> = {}) => ({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    name: `effect4-${name}`,
    root: name,
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    ...test
  }
})

// The Redis fault and failover suites are the Effect 3 line's (packages/redis/test/faults/support, plain vitest and
// Promises) run with Effect 4 worker processes: their `vitest` imports must reach this vitest, not the root's.
const thisVitest = fileURLToPath(new URL("./node_modules/vitest/dist/index.js", import.meta.url))

/**
 * Files side by side, as the root's vitest.config.ts does and for the same reason: the fault, process and consumer
 * suites mostly wait (failovers, expiries, npm), and vitest's default on 2 cores (cores − 1) ran them one at a time.
 * Workers: cores + 1, or SERVICE_SDK_TEST_WORKERS.
 */
const workers = Number(process.env.SERVICE_SDK_TEST_WORKERS) || availableParallelism() + 1

/** The longest files start first, so that none of them is the tail of the run. */
const slowFirstHints = ["redis/test/faults/failover", "consumer/", "redis/test/faults/", "processes", "mixedFleet"]

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    return slowFirst(slowFirstHints, await super.sort(files))
  }
}

export default defineConfig({
  test: {
    projects: [
      project("service-sdk"),
      // the Redis server helpers are the Effect 3 line's (packages/redis/test/support, plain vitest): their `vitest`
      // imports must reach this vitest, not the root's
      {
        ...project("redis", { exclude: ["**/node_modules/**", "test/faults/**"] }),
        resolve: { conditions, alias: [{ find: /^vitest$/, replacement: thisVitest }] }
      },
      // real redis-server, Cluster and Sentinel, and OS processes of both lines under faults (SIGSTOP, SIGKILL)
      {
        ...project("redis-faults", {
          root: "redis",
          include: ["test/faults/**/*.test.ts"],
          globalSetup: ["test/faults/support/build.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000
        }),
        resolve: { conditions, alias: [{ find: /^vitest$/, replacement: thisVitest }] }
      },
      // Bun, Deno and workerd (miniflare), from this project's devDependencies, against the emulator
      // one file at a time, after the other projects: a response body came back unreadable ("Body has already been
      // read") with two miniflares side by side (2 runs of 3), and once with one miniflare beside the other suites
      // (a fresh-clone run, 2026-12-07: the files took turns); never at the end of the run
      project("runtimes", { testTimeout: 180_000, hookTimeout: 180_000, fileParallelism: false }),
      // npm run pack, then the Effect 4 tarballs installed into a fresh Effect 4.1 app (scripts/pack.mjs)
      {
        test: {
          name: "effect4-consumer",
          root: "consumer",
          include: ["*.test.ts"],
          testTimeout: 600_000,
          hookTimeout: 600_000
        }
      }
    ],
    pool: "forks",
    maxWorkers: workers,
    sequence: { sequencer: SlowFirstSequencer }
  }
})
