/**
 * Same public names in both lines, `/testing` (DESIGN section 9): the same value and type names (Fixtures, its body
 * types, Emulator), the same bodies and the same Emulator service members. (`sameNames.test.ts` covers the barrel and
 * `/promise`.)
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Testing from "@service-sdk/effect/testing"
import { describe, expect, expectTypeOf, it } from "vitest"

/** The value (not type-only) names an `index.ts` exports. */
const exportedValues = (source: string): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const match of source.matchAll(/export \* as (\w+) from/g)) names.add(match[1]!)
  for (const match of source.matchAll(/export \{([^}]*)\} from/g)) {
    for (const part of match[1]!.split(",")) {
      const name = part.trim()
      if (name === "" || name.startsWith("type ")) continue
      names.add(
        name
          .split(/\s+as\s+/)
          .pop()!
          .trim()
      )
    }
  }
  return [...names].sort()
}

/** The type-only names an `index.ts`-like module exports (`export type {…}`, `export interface`, `export type X =`). */
const exportedTypes = (source: string): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const match of source.matchAll(/export type \{([^}]*)\} from/g)) {
    for (const part of match[1]!.split(",")) if (part.trim() !== "") names.add(part.trim())
  }
  for (const match of source.matchAll(/^export (?:interface|type) (\w+)/gm)) names.add(match[1]!)
  for (const match of source.matchAll(/export \{([^}]*)\} from/g)) {
    for (const part of match[1]!.split(",")) {
      if (part.trim().startsWith("type ")) names.add(part.trim().slice(5).trim())
    }
  }
  return [...names].sort()
}

/** The value names a module declares itself (`export const`, `export class`) or re-exports. */
const declaredValues = (source: string): ReadonlyArray<string> =>
  [
    ...new Set([
      ...exportedValues(source),
      ...[...source.matchAll(/^export (?:const|class|function) (\w+)/gm)].map((m) => m[1]!)
    ])
  ].sort()

const effect3Testing = readFileSync(
  join(import.meta.dirname, "..", "..", "..", "..", "service-sdk", "src", "testing.ts"),
  "utf8"
)
const effect4Testing = readFileSync(join(import.meta.dirname, "..", "..", "src", "testing.ts"), "utf8")

describe("the Effect 4 line's @service-sdk/effect/testing", () => {
  it("exports every value and every type the Effect 3 line's testing module exports", () => {
    const values = declaredValues(effect3Testing)
    expect(values).toEqual(expect.arrayContaining(["Emulator", "Fixtures", "MockHttpClient", "TestTokenProvider"]))
    expect(values.filter((name) => !(name in Testing))).toEqual([])
    expect(values.filter((name) => !declaredValues(effect4Testing).includes(name))).toEqual([])
    const types = exportedTypes(effect3Testing)
    expect(types).toEqual(expect.arrayContaining(["AlbumBody", "SavedTracksPageBody", "MockHandler"]))
    expect(types.filter((name) => !exportedTypes(effect4Testing).includes(name))).toEqual([])
  })

  it("gives Emulator and MockHttpClient the same statics, and Emulator.Service the same members", () => {
    for (const [name, statics] of [
      ["Emulator", ["make", "layer"]],
      ["MockHttpClient", ["layer", "script", "json"]]
    ] as const) {
      const value = (Testing as unknown as Record<string, Record<string, unknown>>)[name]!
      expect(statics.filter((s) => typeof value[s] !== "function")).toEqual([])
    }
    const members = (source: string) => {
      const body = source.slice(source.indexOf("export interface Service {"))
      return [...body.slice(0, body.indexOf("\n  }\n")).matchAll(/^\s+readonly (\w+)/gm)].map((m) => m[1]!).sort()
    }
    expect(members(effect3Testing).length).toBeGreaterThan(10)
    expect(members(effect4Testing)).toEqual(members(effect3Testing))
  })

  it("Fixtures gives the same bodies on both lines", async () => {
    // plain data (its only import is type-only): the Effect 3 line's module runs here as is
    const file = join(
      import.meta.dirname,
      "..",
      "..",
      "..",
      "..",
      "service-sdk",
      "src",
      "internal",
      "testing",
      "fixtures.ts"
    )
    const effect3 = ((await import(pathToFileURL(file).href)) as { Fixtures: Record<string, () => unknown> }).Fixtures
    const effect4 = Testing.Fixtures as unknown as Record<string, () => unknown>
    expect(Object.keys(effect4).sort()).toEqual(Object.keys(effect3).sort())
    for (const name of Object.keys(effect3)) expect(effect4[name]!(), name).toEqual(effect3[name]!())
  })

  it("the body types are the wire shapes this line's resources decode", () => {
    expectTypeOf(Testing.Fixtures.album()).toEqualTypeOf<Testing.AlbumBody>()
    expectTypeOf<Testing.AlbumBody>().toHaveProperty("tracks")
    expectTypeOf<Testing.SavedTracksPageBody["items"]>().toEqualTypeOf<ReadonlyArray<Testing.SavedTrackBody>>()
    expectTypeOf<Testing.UserBody>().toHaveProperty("display_name")
  })
})
