/**
 * The house rules on this line's sources (the Effect 3 and Effect 4 lines run this same file, at the same path):
 * no value-import cycles, `@since` and `@category` on every public export, a barrel of public modules only.
 */
import { barrelReachesInternal, publicExports, valueImportCycles } from "@service-sdk/conformance"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const src = join(import.meta.dirname, "..", "..", "src")

describe("house rules", () => {
  it("no value-import cycles among the sources", () => {
    expect(valueImportCycles(src).map((cycle) => cycle.join(" -> "))).toEqual([])
  })

  it("every public export has @since and @category", () => {
    const exports = publicExports(src)
    expect(exports.length).toBeGreaterThan(50)
    expect(exports.filter((e) => !e.since || !e.category).map((e) => `${e.file}: ${e.name}`)).toEqual([])
  })

  it("the barrel exports public modules only", () => {
    expect(barrelReachesInternal(src)).toEqual([])
  })
})
