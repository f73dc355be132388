import type { TestProjectInlineConfiguration } from "vitest/config"

// Resolve workspace packages to their TypeScript sources (the "source" export condition), so tests need no build.
const conditions = ["source", "import", "node", "default"]

const project = (
  name: string,
  extra: Partial<TestProjectInlineConfiguration["test"]> = {}
): TestProjectInlineConfiguration => ({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    name,
    root: `packages/${name}`,
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    ...extra
  }
})

export default [
  project("service-sdk"),
  project("emulator"),
  project("redis", { exclude: ["**/node_modules/**", "test/faults/**"] }),
  // real redis-server and OS processes under faults (SIGSTOP, SIGKILL, CLIENT PAUSE, restarts): one file at a time,
  // in their own worker thread, so that they run beside the other projects (the forks pool) instead of after them.
  // (In a multi-project run, vitest reads `fileParallelism` and worker counts from the root config only; a project's
  // `poolOptions.threads.singleThread` is what keeps its files in one worker, one after the other.)
  project("redis-faults", {
    root: "packages/redis",
    include: ["test/faults/**/*.test.ts"],
    globalSetup: ["test/faults/support/build.ts"],
    pool: "threads",
    poolOptions: { threads: { singleThread: true } },
    fileParallelism: false,
    testTimeout: 90_000
  }),
  project("cli"),
  // the web app example (headless Chromium, redis-server and the built app)
  project("web-app", { root: "examples/web-app" }),
  project("bench"),
  // README.md's TypeScript blocks, type-checked as written (scripts/readme-check.mjs)
  project("readme", { root: "scripts", include: ["test/readme.test.ts"] }),
  // npm pack every package, install the tarballs into a fresh project with another Effect 3.22.x, run a program
  project("consumer", {
    root: "scripts",
    include: ["test/consumer.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000
  })
]
