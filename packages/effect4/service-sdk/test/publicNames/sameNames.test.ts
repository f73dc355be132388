/**
 * Same public names in both lines (DESIGN section 1): every value the Effect 3 line's barrel exports (read from its
 * source), and every static of its service classes, is exported by this line too; and the `/promise` modules of
 * both lines have the same names and plain types.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Sdk from "@service-sdk/effect"
import * as Promise4 from "@service-sdk/effect/promise"
import { describe, expect, expectTypeOf, it } from "vitest"
// the Effect 3 line's declarations, as built (`tsc -b` builds that line first: see tsconfig.test.json)
import type * as Promise3 from "../../../../service-sdk/dist/promise.js"

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

// ---------------------------------------------------------------------------------------------------------------
// `/promise`: the same names, and the same plain types, on both lines (issue 38 item 1)

const effect3Promise = readFileSync(
  join(import.meta.dirname, "..", "..", "..", "..", "service-sdk", "src", "promise.ts"),
  "utf8"
)
const effect4Promise = readFileSync(join(import.meta.dirname, "..", "..", "src", "promise.ts"), "utf8")

/** Every name (values and types) a `promise.ts` exports. */
const exportedNames = (source: string): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const match of source.matchAll(/export \* as (\w+) from/g)) names.add(match[1]!)
  for (const match of source.matchAll(/export (?:type )?\{([^}]*)\} from/g)) {
    for (const part of match[1]!.split(",")) {
      const name = part.trim().replace(/^type\s+/, "")
      if (name !== "")
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

/** The members two types share by name, and those only one has. */
type SameMembers<A, B> = {
  readonly onlyEffect3: Exclude<keyof A, keyof B>
  readonly onlyEffect4: Exclude<keyof B, keyof A>
}
type Same = { readonly onlyEffect3: never; readonly onlyEffect4: never }

/** The options a constructor takes. */
type OptionsOf<C> = C extends abstract new (options?: infer O, ...rest: infer _) => unknown ? NonNullable<O> : never

describe("the `/promise` modules of both lines", () => {
  it("export the same names, values and types (read from both sources)", () => {
    const effect3 = exportedNames(effect3Promise)
    expect(effect3.length).toBeGreaterThan(20)
    expect(exportedNames(effect4Promise)).toEqual(effect3)
    // and the values are there at run time
    expect(exportedValues(effect3Promise).filter((name) => !(name in Promise4))).toEqual([])
  })

  it("the same value names, classes and members, options and plain results (checked by the compiler)", () => {
    expectTypeOf<SameMembers<typeof Promise3, typeof Promise4>>().toEqualTypeOf<Same>()
    // the classes: statics, and their instances' members
    expectTypeOf<
      SameMembers<typeof Promise3.AsyncServiceClient, typeof Promise4.AsyncServiceClient>
    >().toEqualTypeOf<Same>()
    expectTypeOf<
      SameMembers<typeof Promise3.AsyncAuthorizationCode, typeof Promise4.AsyncAuthorizationCode>
    >().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.AsyncClientCredentials, Promise4.AsyncClientCredentials>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.AsyncAuthorizationCode, Promise4.AsyncAuthorizationCode>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.AsyncServiceClient, Promise4.AsyncServiceClient>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.AsyncUserTokens, Promise4.AsyncUserTokens>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.AsyncUserTokenProvider, Promise4.AsyncUserTokenProvider>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.FileTokenCache, Promise4.FileTokenCache>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.FacadeLogger, Promise4.FacadeLogger>>().toEqualTypeOf<Same>()
    // the options: the same names
    expectTypeOf<
      SameMembers<OptionsOf<typeof Promise3.AsyncClientCredentials>, OptionsOf<typeof Promise4.AsyncClientCredentials>>
    >().toEqualTypeOf<Same>()
    expectTypeOf<
      SameMembers<OptionsOf<typeof Promise3.AsyncAuthorizationCode>, OptionsOf<typeof Promise4.AsyncAuthorizationCode>>
    >().toEqualTypeOf<Same>()
    expectTypeOf<
      SameMembers<Promise3.AsyncServiceClientOptions, Promise4.AsyncServiceClientOptions>
    >().toEqualTypeOf<Same>()
    // `refreshAhead` of many users: the Effect 3 line's UserTokens has it, this line's does not (yet); any other
    // difference fails here
    expectTypeOf<
      SameMembers<Omit<Promise3.AsyncUserTokensOptions, "refreshAhead">, Promise4.AsyncUserTokensOptions>
    >().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.FacadeOptions, Promise4.FacadeOptions>>().toEqualTypeOf<Same>()
    expectTypeOf<SameMembers<Promise3.TokenInfoJson, Promise4.TokenInfoJson>>().toEqualTypeOf<Same>()
    // plain types are the same types
    expectTypeOf<Promise3.LogLevelName>().toEqualTypeOf<Promise4.LogLevelName>()
    expectTypeOf<Promise3.FacadeLogger>().toEqualTypeOf<Promise4.FacadeLogger>()
    // every JSON form this line writes is one the Effect 3 line reads (there `refresh_rejected` is a boolean, here
    // only ever `true`)
    expectTypeOf<Promise4.TokenInfoJson>().toMatchTypeOf<Promise3.TokenInfoJson>()
    expectTypeOf<Promise3.AsyncClientCredentials["getAccessToken"]>().toEqualTypeOf<
      Promise4.AsyncClientCredentials["getAccessToken"]
    >()
    expectTypeOf<Promise3.AsyncClientCredentials["forceRefresh"]>().toEqualTypeOf<
      Promise4.AsyncClientCredentials["forceRefresh"]
    >()
    expectTypeOf<Promise3.AsyncUserTokens["getAccessToken"]>().toEqualTypeOf<
      Promise4.AsyncUserTokens["getAccessToken"]
    >()
    expectTypeOf<Promise3.AsyncUserTokens["signInEndsAt"]>().toEqualTypeOf<Promise4.AsyncUserTokens["signInEndsAt"]>()
    expectTypeOf<Promise3.AsyncAuthorizationCode["getAuthorizationUrl"]>().returns.toEqualTypeOf<string>()
    expectTypeOf<Promise4.AsyncAuthorizationCode["getAuthorizationUrl"]>().returns.toEqualTypeOf<string>()
    expectTypeOf<typeof Promise3.AsyncAuthorizationCode.parseResponseUrl>().toEqualTypeOf<
      typeof Promise4.AsyncAuthorizationCode.parseResponseUrl
    >()
    expectTypeOf<typeof Promise3.tokenInfoFromJson>().parameters.toEqualTypeOf<
      Parameters<typeof Promise4.tokenInfoFromJson>
    >()
    expectTypeOf<typeof Promise3.fileTokenCache>().parameters.toEqualTypeOf<
      Parameters<typeof Promise4.fileTokenCache>
    >()
    expectTypeOf<Promise3.AsyncServiceClient["close"]>().toEqualTypeOf<Promise4.AsyncServiceClient["close"]>()
  })
})
