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

export default [project("service-sdk"), project("emulator"), project("redis"), project("cli"), project("bench")]
