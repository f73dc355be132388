import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"

const require = createRequire(import.meta.url)

describe("the Effect 4 line's toolchain", () => {
  it("runs on a supported LTS Node (22.19 or later), not the machine's Node 20", () => {
    const [major, minor] = process.versions.node.split(".").map(Number)
    expect(major! > 22 || (major === 22 && minor! >= 19)).toBe(true)
  })

  it("resolves effect 4.1.0, the pinned version, from the nested project", () => {
    const manifest = JSON.parse(readFileSync(require.resolve("effect/package.json"), "utf8"))
    expect(manifest.version).toBe("4.1.0")
  })
})
