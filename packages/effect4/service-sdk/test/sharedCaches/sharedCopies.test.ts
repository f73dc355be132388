/** The plain modules both lines use are kept in packages/shared/src; the copy this package ships must be identical. */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..", "..", "..", "..")
const originals = join(root, "packages", "shared", "src")
const copyDirs = [
  join(import.meta.dirname, "..", "..", "src", "internal", "shared"),
  join(import.meta.dirname, "..", "..", "..", "redis", "src", "internal", "shared")
]

describe("shared plain modules", () => {
  it.each(copyDirs)(
    "%s is packages/shared/src, byte for byte after its header (`npm run shared` updates it)",
    (copies) => {
      const names = readdirSync(originals)
        .filter((file) => file.endsWith(".ts"))
        .sort()
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
})
