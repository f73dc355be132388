import type { TestProjectInlineConfiguration } from "vitest/config"
import { slowFilesInclude, slowFilesOnly, unitProjects } from "./scripts/test/slowFiles.mjs"

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
    // npm test's second Effect 3 run (scripts/test.mjs): a unit project's slow files only (its others ran first)
    ...(slowFilesOnly && unitProjects.includes(name) ? { include: slowFilesInclude } : {}),
    ...extra
  }
})

export default [
  project("service-sdk"),
  project("emulator"),
  // @service-sdk/promise: the facade's build (its plain types, its bundle)
  project("promise"),
  project("redis", { exclude: ["**/node_modules/**", "test/faults/**"] }),
  // real redis-server, Cluster and Sentinel, and OS processes under faults (SIGSTOP, SIGKILL, CLIENT PAUSE,
  // failovers, restarts): each file has its own servers and free ports and mostly waits, so files run side by side
  project("redis-faults", {
    root: "packages/redis",
    include: ["test/faults/**/*.test.ts"],
    globalSetup: ["test/faults/support/build.ts"],
    testTimeout: 180_000
  }),
  project("cli"),
  // the web app example (headless Chromium, redis-server and the built app)
  project("web-app", { root: "examples/web-app" }),
  project("bench"),
  // README.md's and docs/*.md's TypeScript blocks (scripts/readme-check.mjs), the package READMEs, versions and the lockfile
  project("readme", {
    root: "scripts",
    include: ["test/readme.test.ts", "test/lockfile.test.ts", "test/packages.test.ts"]
  }),
  // npm pack every package, install the tarballs into a fresh project with another Effect 3.22.x, run a program
  project("consumer", {
    root: "scripts",
    include: ["test/consumer.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000
  }),
  // every package of both lines published to a local npm registry (verdaccio) by the release script, then installed
  // by name in fresh apps (Effect 4, Effect 3, plain, npx the CLI); the bundles' licence notices. Its name ends in
  // "consumer": npm test runs it with the consumer tests, on the supported Node (scripts/test.mjs)
  project("registry-consumer", {
    root: "scripts",
    include: ["test/registry.test.ts", "test/notices.test.ts", "test/release.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000
  }),
  // @service-sdk/promise packed and installed alone, and beside effect@4: the README's examples against the emulator
  project("promise-consumer", {
    root: "scripts",
    include: ["test/promise-consumer.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000
  })
]
