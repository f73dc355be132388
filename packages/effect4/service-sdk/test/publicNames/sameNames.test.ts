/**
 * Same public names in both lines (DESIGN section 1): every value the Effect 3 line's barrel exports (read from its
 * source), and every static of its service classes, is exported by this line too.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Sdk from "@service-sdk/effect"
import { describe, expect, it } from "vitest"

const effect3Index = readFileSync(
  join(import.meta.dirname, "..", "..", "..", "..", "service-sdk", "src", "index.ts"),
  "utf8"
)

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

describe("the Effect 4 line's public names", () => {
  it("exports every value the Effect 3 line's barrel exports", () => {
    const effect3 = exportedValues(effect3Index)
    expect(effect3.length).toBeGreaterThan(10)
    expect(effect3.filter((name) => !(name in Sdk))).toEqual([])
  })

  it("gives its services the statics programs call (make, layer, ...)", () => {
    const statics = {
      ServiceClient: ["make", "makeWith", "layer", "layerAccessToken", "layerClientCredentials", "forUser"],
      AuthorizationCode: ["make", "layer", "parseResponseUrl"],
      ClientCredentials: ["make", "layer"],
      OAuthClient: ["make", "layer"],
      UserTokens: ["make", "layer"],
      TokenProvider: ["static", "layerStatic"]
    } as const
    for (const [service, names] of Object.entries(statics)) {
      const value = (Sdk as unknown as Record<string, Record<string, unknown>>)[service]!
      expect(
        names.filter((name) => typeof value[name] !== "function"),
        service
      ).toEqual([])
    }
  })
})
