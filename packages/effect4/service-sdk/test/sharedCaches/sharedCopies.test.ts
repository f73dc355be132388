/**
 * The plain modules both lines use are kept in packages/shared/src; the copies this line's packages ship must be
 * identical, and each package carries just the modules it imports (`scripts/shared.mjs`).
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..", "..", "..", "..")
const originals = join(root, "packages", "shared", "src")
const copyDirs = [
  join(import.meta.dirname, "..", "..", "src", "internal", "shared"),
  join(import.meta.dirname, "..", "..", "..", "redis", "src", "internal", "shared")
]

const { neededBy } = (await import(join(root, "scripts", "shared.mjs"))) as {
  readonly neededBy: (copyDir: string) => ReadonlyArray<string>
}

describe("shared plain modules", () => {
  it.each(copyDirs)(
    "%s is packages/shared/src, byte for byte after its header (`npm run shared` updates it)",
    (copies) => {
      const names = neededBy(copies)
      expect(names.length).toBeGreaterThan(0)
      expect(
        readdirSync(copies)
          .filter((file) => file.endsWith(".ts"))
          .sort()
      ).toEqual(names)
      for (const name of names) {
        const copy = readFileSync(join(copies, name), "utf8")
        const [header, ...rest] = copy.split("\n")
        expect(header, name).toMatch(/^\/\/ Copied from packages\/shared\/src\//)
        expect(rest.join("\n"), name).toBe(readFileSync(join(originals, name), "utf8"))
      }
    }
  )

  it("a package carries only what it imports: the Effect 4 Redis package has no file protocol", () => {
    expect(neededBy(copyDirs[1]!)).toContain("redisProtocol.ts")
    expect(neededBy(copyDirs[1]!)).not.toContain("fileLock.ts")
    expect(neededBy(copyDirs[0]!)).toContain("fileLock.ts")
  })
})
