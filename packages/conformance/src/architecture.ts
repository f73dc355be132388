/**
 * The house rules that both lines' sources obey (issue 37, the contract (7)), as plain checks over a package's
 * `src/`: each line's `test/architecture/houseRules.test.ts` (the same path in both) runs them on its own sources.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

/** Every `.ts` file under `dir`, relative to it. */
export const sourceFiles = (dir: string): ReadonlyArray<string> => {
  const walk = (at: string): ReadonlyArray<string> =>
    readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
      const path = join(at, entry.name)
      if (entry.isDirectory()) return walk(path)
      return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [relative(dir, path)] : []
    })
  return walk(dir)
}

/** A relative import of `file`: its target (relative to `src`) and whether it loads the target at run time. */
export interface ImportEdge {
  readonly target: string
  readonly value: boolean
}

/** The relative imports and re-exports of one file (static and dynamic); `import type` is not a value edge. */
export const importsOf = (src: string, file: string): ReadonlyArray<ImportEdge> => {
  const text = readFileSync(join(src, file), "utf8")
  const edges: Array<ImportEdge> = []
  const pattern = /(import|export)(\s+type)?\s*(?:[\w*{}\s,$]*?\bfrom\s*)?(\()?\s*"(\.{1,2}\/[^"]+)"(\)\.[A-Z])?/g
  for (const match of text.matchAll(pattern)) {
    const target = relative(src, resolve(dirname(join(src, file)), match[4]!.replace(/\.js$/, ".ts")))
    const lineStart = text.lastIndexOf("\n", match.index) + 1
    // `import("./x.js").Name` in a type position (after `type X =`) loads nothing
    const typeQuery =
      match[3] !== undefined && (match[5] !== undefined || /\btype\s/.test(text.slice(lineStart, match.index)))
    edges.push({ target, value: match[2] === undefined && !typeQuery })
  }
  return edges
}

/** The cycles of value imports among `src`'s files (each cycle once, as the files in import order). */
export const valueImportCycles = (src: string): ReadonlyArray<ReadonlyArray<string>> => {
  const files = sourceFiles(src)
  const graph = new Map(
    files.map((file) => [
      file,
      [
        ...new Set(
          importsOf(src, file)
            .filter((edge) => edge.value)
            .map((edge) => edge.target)
        )
      ]
    ])
  )
  const cycles: Array<ReadonlyArray<string>> = []
  const seen = new Set<string>()
  const state = new Map<string, "open" | "done">()
  const path: Array<string> = []
  const visit = (file: string) => {
    state.set(file, "open")
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") {
        const cycle = path.slice(path.indexOf(next))
        const key = [...cycle].sort().join(" ")
        if (!seen.has(key)) {
          seen.add(key)
          cycles.push(cycle)
        }
      } else if (state.get(next) === undefined && graph.has(next)) visit(next)
    }
    path.pop()
    state.set(file, "done")
  }
  for (const file of files) if (state.get(file) === undefined) visit(file)
  return cycles
}

/** A top-level export of a public module and the tags of its JSDoc. */
export interface PublicExport {
  readonly file: string
  readonly name: string
  readonly since: boolean
  readonly category: boolean
}

/**
 * The declarations that the public modules (`src/*.ts` but the barrel, not `src/internal/`) export, with whether
 * their JSDoc has `@since` and `@category`.
 */
export const publicExports = (src: string, barrel = "index.ts"): ReadonlyArray<PublicExport> =>
  sourceFiles(src)
    .filter((file) => !file.includes("/") && file !== barrel)
    .flatMap((file) => {
      const text = readFileSync(join(src, file), "utf8")
      const declaration =
        /(\/\*\*(?:(?!\*\/)[\s\S])*\*\/\s*)?^export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|interface|type|namespace|enum)\s+([A-Za-z_$][\w$]*)/gm
      // overloads: one export, tagged when any of its declarations is; `@internal` ones are not public
      const byName = new Map<string, Array<string>>()
      for (const match of text.matchAll(declaration))
        byName.set(match[2]!, [...(byName.get(match[2]!) ?? []), match[1] ?? ""])
      return [...byName]
        .filter(([, docs]) => !docs.some((doc) => /@internal\b/.test(doc)))
        .map(([name, docs]) => ({
          file,
          name,
          since: docs.some((doc) => /@since\s/.test(doc)),
          category: docs.some((doc) => /@category\s/.test(doc))
        }))
    })

/** What the barrel re-exports from `src/internal/` (the barrel exports public modules only). */
export const barrelReachesInternal = (src: string, barrel = "index.ts"): ReadonlyArray<string> =>
  importsOf(src, barrel)
    .map((edge) => edge.target)
    .filter((target) => target.startsWith("internal/"))
    .concat(
      [...readFileSync(join(src, barrel), "utf8").matchAll(/from\s*"(@service-sdk\/shared\/[^"]+)"/g)].map(
        (match) => match[1]!
      )
    )

/** The layers of `docs/architecture.md`, lowest first: a module imports only from its own layer or those below. */
export const LAYERS = ["protocol", "ownership", "client", "facade"] as const
export type LayerName = (typeof LAYERS)[number]

/**
 * The layering of one line's `src/` by `rules` (path prefixes, the first match wins): the files with no layer, and
 * every import (types included) from a layer above the importer's.
 */
export const layerViolations = (
  src: string,
  rules: ReadonlyArray<readonly [string, LayerName]>
): { readonly unplaced: ReadonlyArray<string>; readonly upward: ReadonlyArray<string> } => {
  const layerOf = (path: string) => rules.find(([prefix]) => path.startsWith(prefix))?.[1]
  const files = sourceFiles(src)
  const rank = (path: string) => LAYERS.indexOf(layerOf(path)!)
  return {
    unplaced: files.filter((file) => layerOf(file) === undefined),
    upward: files.flatMap((file) =>
      importsOf(src, file)
        .map((edge) => edge.target)
        .filter((target) => layerOf(target) !== undefined && rank(target) > rank(file))
        .map((target) => `${file} (${layerOf(file)}) imports ${target} (${layerOf(target)})`)
    )
  }
}
