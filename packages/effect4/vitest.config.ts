import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

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
    pool: "forks"
  }
})
