/**
 * Only the public API of a dependency (DESIGN section 7): no source file of any package reaches into `effect` or
 * `@effect/platform` through a `globalValue` key of theirs, a re-implemented `TypeId`, or a read of an internal
 * field. Such code silently breaks in a minor release (Effect 4 moved the platform's request registry into a
 * module-local `WeakMap`). Each rule is checked on the code it was written against, so the scan itself can fail.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url))

/** Every `.ts` file under `src/` of every package, and of the examples. */
const sources = (): ReadonlyArray<string> => {
  const files: Array<string> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === "node_modules" || name === "dist" || name === "build") continue
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.(ts|mts|cts|tsx)$/.test(name) && !name.endsWith(".d.ts")) files.push(path)
    }
  }
  // packages/effect4: the Effect 4 line's packages (a nested npm project)
  for (const parent of ["packages", "examples", "packages/effect4"]) {
    const base = join(ROOT, parent)
    for (const name of readdirSync(base)) {
      const src = join(base, name, "src")
      if (statSync(join(base, name)).isDirectory() && existsDir(src)) walk(src)
    }
  }
  return files
}

const existsDir = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

interface Rule {
  readonly name: string
  readonly find: (source: string) => ReadonlyArray<string>
}

const matches = (pattern: RegExp) => (source: string) => [...source.matchAll(pattern)].map((match) => match[0])

const OWN_KEY = /^["'`](service-sdk|@service-sdk)\//

const rules: ReadonlyArray<Rule> = [
  {
    // a shared global of another package (e.g. "@effect/platform/HttpClient/scopedRequests"); ours must be a literal
    // key of our own
    name: "globalValue( of another package's key",
    find: (source) =>
      [...source.matchAll(/globalValue\s*\(\s*([^,)]*)/g)]
        .filter((match) => !OWN_KEY.test(match[1]!.trim()))
        .map((match) => match[0])
  },
  {
    // `[HttpClientResponse.TypeId]: ...`, `TypeId = ...`: an object passing for a platform or Effect data type
    name: "a re-implemented TypeId",
    find: matches(/\[\s*[A-Za-z_$][\w$]*\.TypeId\s*\]|\bTypeId\s*[:=]\s*[A-Za-z_$][\w$]*\.TypeId\b/g)
  },
  {
    // Effect's and the platform's symbols, looked up by their registered names
    name: "a Symbol.for of effect or @effect",
    find: matches(/Symbol\.for\(\s*["'`](effect|@effect)\/[^"'`]*["'`]\s*\)/g)
  },
  {
    // reading a field an Effect type keeps internal, through a cast: `(ref as unknown as { readonly ref?: … }).ref`
    name: "a read of an internal field through a cast",
    find: matches(/as\s+unknown\s+as\s+\{\s*(readonly\s+)?(\[[^\]]*\]|[\w$]+\??)\s*:[^}]*\}\s*\)\s*(\.|\[)/g)
  },
  {
    // the platform's and Effect's internal modules
    name: "an import of an internal module",
    find: matches(/from\s+["'](effect|@effect\/[\w-]+)\/(dist\/[^"']*|src\/[^"']*|internal\/[^"']*)["']/g)
  }
]

describe("only public APIs of dependencies", () => {
  it("the rules catch the code they were written against", () => {
    const old = {
      registry: `const registry = globalValue(REGISTRY_KEY, () => new WeakMap())`,
      registryLiteral: `globalValue("@effect/platform/HttpClient/scopedRequests", () => new WeakMap())`,
      typeId: `readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId`,
      symbol: `Symbol.for("effect/MutableRef") in cell`,
      field: `const cell = (ref as unknown as { readonly ref?: MutableRef.MutableRef<A> }).ref`,
      symbolField: `(cache as unknown as { readonly [key: symbol]: unknown })[grace]`,
      internal: `import * as internal from "@effect/platform/internal/httpClient"`
    }
    const found = (text: string) => rules.filter((rule) => rule.find(text).length > 0).map((rule) => rule.name)
    expect(found(old.registry)).toEqual(["globalValue( of another package's key"])
    expect(found(old.registryLiteral)).toEqual(["globalValue( of another package's key"])
    expect(found(old.typeId)).toEqual(["a re-implemented TypeId"])
    expect(found(old.symbol)).toEqual(["a Symbol.for of effect or @effect"])
    expect(found(old.field)).toEqual(["a read of an internal field through a cast"])
    expect(found(old.symbolField)).toEqual(["a read of an internal field through a cast"])
    expect(found(old.internal)).toEqual(["an import of an internal module"])
    // and leave ordinary code alone
    expect(found(`globalValue("service-sdk/cache", () => 1)`)).toEqual([])
    expect(found(`const payload = value as unknown as ErrorPayload`)).toEqual([])
    expect(found(`import * as HttpClient from "@effect/platform/HttpClient"`)).toEqual([])
  })

  it("no source file of any package breaks them", () => {
    const files = sources()
    // the scan reaches every package (a moved directory must not make it vacuous)
    const scanned = new Set(files.map((file) => relative(ROOT, file).split("/").slice(0, 2).join("/")))
    for (const pkg of ["packages/service-sdk", "packages/redis", "packages/emulator", "packages/cli"]) {
      expect(scanned).toContain(pkg)
    }
    const offences = files.flatMap((file) => {
      const source = readFileSync(file, "utf8")
      return rules.flatMap((rule) => rule.find(source).map((text) => `${relative(ROOT, file)}: ${rule.name}: ${text}`))
    })
    expect(offences).toEqual([])
  })
})
