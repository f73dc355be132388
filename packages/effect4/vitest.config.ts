import { defineConfig } from "vitest/config"

// The Effect 4 line's suites, on the Node this project installs (scripts/effect4.mjs). Workspace packages resolve to
// their TypeScript sources (the "source" export condition), so tests need no build.
const conditions = ["source", "import", "node", "default"]

const project = (name: string) => ({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    name: `effect4-${name}`,
    root: name,
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})

export default defineConfig({
  test: {
    projects: [
      project("service-sdk"),
      project("redis"),
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
