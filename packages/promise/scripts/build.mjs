/**
 * Builds `@service-sdk/promise`: the Effect 4 line's `@service-sdk/effect/promise` facade (src/index.ts re-exports it
 * with plain types) bundled with the Effect 4 runtime it uses: one tree-shaken CommonJS module (short identifiers; class names and line
 * breaks kept) with a source map (dist/index.cjs), and an ES module entry (dist/index.js) that re-exports it, so `import` and `require` share one
 * copy (one `instanceof`, one cache, no dual-package hazard). The HTTP client is the global `fetch` (the Effect 4
 * facade's default); `ioredis` is the app's own, required when a Redis
 * cache opens a connection (src/internal/ioredis.ts). The `.d.ts` comes from `tsc -b` (no Effect type);
 * it is copied for `require` as `.d.cts`. Run after `tsc -b` (the root `build` does both).
 *
 * A second bundle, `dist/browser.js`, is for browser pages and Cloudflare Workers (the `browser`, `worker` and
 * `workerd` export conditions: what page bundlers and wrangler pick): one ES module built from the same entry with
 * the Effect 4 line's `browser` conditions (its `#file-cache` stand-in), with no Node built-in at all (`fetch`
 * transport, no `node:*`, no `createRequire`): the modules that need Node (the file machinery, files per user, the
 * loopback sign-in, `@service-sdk/redis` and `ioredis`) are replaced by stand-ins that fail with a
 * ConfigurationError saying why (src/internal/browser/, `browserStandIns`). Node's entries never resolve to it, so
 * Node keeps one copy.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { writeNotices } from "../../../scripts/notices.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const dist = join(root, "dist")
// built aside and moved in, so that a test reading dist never sees half a build
const staging = join(root, `dist.tmp-${process.pid}`)

/** `@service-sdk/redis`'s `ioredis`, swapped for the app's own, loaded on first use. */
const appIoredis = {
  name: "app-ioredis",
  setup(build) {
    const shim = join(root, "src", "internal", "ioredis.ts")
    build.onResolve({ filter: /^ioredis$/ }, (args) =>
      args.importer === shim ? { path: "ioredis", external: true } : { path: shim }
    )
  }
}

/**
 * The dynamic `import()`s of the sources (the facade's `authorizeLocal` and default HTTP client, the Redis helpers),
 * made static in the bundle. In a bundle that is one file, esbuild keeps an `import()` lazy by wrapping its target
 * and every module it imports, transitively, in an initialiser (`__esm`): most of Effect and of the SDK, which every
 * import evaluates anyway, then pays the wrappers and compiles their bodies twice (~15 ms of a cold import's CPU,
 * more than those modules' own evaluation). What made them worth loading late were Node's modules they load at
 * their top level: those are loaded on first use instead (`lazyBuiltins`).
 */
const staticImports = {
  name: "static-imports",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes("node_modules")) return undefined
      const text = readFileSync(args.path, "utf8")
      if (!text.includes('import("')) return undefined
      const heads = []
      // (not `typeof import("…")` nor `import("…").Name`, types)
      const contents = text.replace(/(?<!typeof\s*)\bimport\(("[^"]+")\)(?!\.[A-Z])/g, (_, specifier) => {
        const name = `__bundled${heads.length}`
        heads.push(`import * as ${name} from ${specifier}`)
        return `Promise.resolve(${name})`
      })
      // on the first line, so that the source map's lines stay those of the file
      return { contents: `${heads.join("; ")}; ${contents}`, loader: "ts", resolveDir: dirname(args.path) }
    })
  }
}

/**
 * Node's modules that nothing needs at import, loaded on first use: each function the SDK (or a bundled dependency)
 * imports from them calls Node's own. An import of a name not listed fails the build ("No matching export").
 */
const lazyBuiltins = {
  name: "lazy-builtins",
  setup(build) {
    const functions = {
      crypto: ["createHash", "randomBytes", "randomUUID"],
      http: ["createServer"],
      child_process: ["spawn"],
      net: ["connect"],
      tls: ["connect"]
    }
    build.onResolve({ filter: /^(node:)?(crypto|http|child_process|net|tls)$/ }, (args) => {
      const name = args.path.replace(/^node:/, "")
      // the shim's own `require` is Node's module
      return args.namespace === "lazy-builtin"
        ? { path: `node:${name}`, external: true }
        : { path: name, namespace: "lazy-builtin" }
    })
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => ({
      contents: [
        `let loaded\nconst load = () => (loaded ??= require("node:${args.path}"))`,
        ...functions[args.path].map((name) => `export const ${name} = (...args) => load().${name}(...args)`)
      ].join("\n"),
      loader: "js"
    }))
  }
}

/**
 * The browser bundle's stand-ins (src/internal/browser/): each module of the sources that needs Node, imported by a
 * relative path, is replaced by one with the same exports that fails with a ConfigurationError naming the reason.
 */
const browserStandIns = {
  name: "browser-stand-ins",
  setup(build) {
    const packagesDir = join(root, "..")
    const standIn = (name) => join(root, "src", "internal", "browser", `${name}.ts`)
    const replaced = new Map([
      [join(packagesDir, "effect4", "service-sdk", "src", "internal", "fileProgram.ts"), standIn("fileProgram")],
      [join(packagesDir, "effect4", "service-sdk", "src", "TokenStore.ts"), standIn("TokenStore")],
      [join(packagesDir, "effect4", "service-sdk", "src", "authorizeLocal.ts"), standIn("authorizeLocal")],
      [join(packagesDir, "effect4", "redis", "src", "index.ts"), standIn("redis")]
    ])
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      const to = replaced.get(join(args.resolveDir, args.path.replace(/\.js$/, ".ts")))
      return to === undefined ? undefined : { path: to }
    })
  }
}

/** Options shared by both bundles. */
const common = {
  absWorkingDir: root,
  entryPoints: ["src/index.ts"],
  bundle: true,
  // Minified, in lines of about 80 characters (an unhandled rejection prints one short source line, not a one-line
  // bundle). The public classes name themselves (ServiceError.ts, src/index.ts: `e.name`, `constructor.name`, stack
  // headers read `AuthenticationError`), and the source map beside the bundle gives frames their real names
  // (`node --enable-source-maps`), so esbuild's `keepNames` and its ~2,000 `__name` calls at import (~3 ms of a cold
  // start, 40 KB) are left out (docs/decisions.md 31.25)
  minify: true,
  lineLimit: 80,
  keepNames: false,
  treeShaking: true,
  sourcemap: true,
  sourcesContent: false,
  metafile: true,
  legalComments: "none",
  logLevel: "warning"
}

/** No module of a bundle may be loaded lazily again (see staticImports): every one is evaluated at the top level. */
const checkNoLazyImports = (metafile) => {
  const lazy = Object.entries(metafile.inputs).flatMap(([input, { imports }]) =>
    imports.filter((i) => !i.external && i.kind !== "import-statement").map((i) => `${input} -> ${i.path} (${i.kind})`)
  )
  if (lazy.length > 0) {
    rmSync(staging, { recursive: true, force: true })
    throw new Error(`modules loaded lazily inside the bundle (see staticImports):\n${lazy.join("\n")}`)
  }
}

rmSync(staging, { recursive: true, force: true })
const { metafile } = await build({
  ...common,
  outfile: join(staging, "index.cjs"),
  format: "cjs",
  platform: "node",
  target: "node20",
  conditions: ["source"],
  plugins: [staticImports, lazyBuiltins, appIoredis]
})
checkNoLazyImports(metafile)
const names = Object.keys(createRequire(import.meta.url)(join(staging, "index.cjs"))).sort()
// loaded with `require`, not `import`: Node then does not lex the whole bundle for its export names
writeFileSync(
  join(staging, "index.js"),
  `import { createRequire } from "node:module"\nconst m = createRequire(import.meta.url)("./index.cjs")\nexport const { ${names.join(", ")} } = m\n`
)

// The browser and Worker bundle: an ES module with no Node built-in (platform "browser": an import of one fails the
// build), the Effect 4 line's `browser` conditions, Node's modules replaced by stand-ins (browserStandIns)
const browserBuild = await build({
  ...common,
  outfile: join(staging, "browser.js"),
  format: "esm",
  platform: "browser",
  target: "es2022",
  conditions: ["browser", "source"],
  plugins: [staticImports, browserStandIns]
})
checkNoLazyImports(browserBuild.metafile)
const browserOutput = Object.values(browserBuild.metafile.outputs).find((output) => output.entryPoint !== undefined)
const browserNames = [...browserOutput.exports].sort()
if (browserNames.join() !== names.join()) {
  rmSync(staging, { recursive: true, force: true })
  throw new Error(`dist/browser.js exports ${browserNames.join(", ")}; the Node entry ${names.join(", ")}`)
}
const nodeOnly = Object.keys(browserBuild.metafile.inputs).filter(
  (input) =>
    !input.startsWith("src/internal/browser/") &&
    /\/node_modules\/ioredis\/|\/(fileProgram|fileSafety|fileEntry|fileCas|local\/\w+|authorizeLocal|TokenStore)\.ts$/.test(
      input
    )
)
if (nodeOnly.length > 0) {
  rmSync(staging, { recursive: true, force: true })
  throw new Error(`Node-only modules in dist/browser.js (see browserStandIns):\n${nodeOnly.join("\n")}`)
}

/**
 * Source-mapped paths that resolve (issue 42 item 15): the SDK's own sources the bundle was built from are shipped
 * under `dist/sources/` (`service-sdk/…` for the Effect 4 line's, `redis/…`, `shared/…` for the core, `promise/…`) and the map points there;
 * a bundled dependency's file is named by its package and version (`effect@4.1.0/dist/Effect.js`: that package's
 * own file, not shipped here). `lazy-builtin:` entries are the build's own shims (see lazyBuiltins).
 */
const shipSources = (mapFile) => {
  const map = JSON.parse(readFileSync(mapFile, "utf8"))
  const packagesDir = join(root, "..")
  const origins = [
    [join(packagesDir, "effect4", "service-sdk", "src"), "service-sdk"],
    [join(packagesDir, "effect4", "redis", "src"), "redis"],
    [join(packagesDir, "shared", "src"), "shared"],
    [join(root, "src"), "promise"]
  ]
  map.sources = map.sources.map((source) => {
    if (source.startsWith("lazy-builtin:")) return source
    const absolute = join(staging, source)
    const modules = absolute.lastIndexOf(`${sep}node_modules${sep}`)
    if (modules >= 0) {
      const rest = absolute.slice(modules + "/node_modules/".length).split(sep)
      const name = rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]
      const manifest = join(absolute.slice(0, modules), "node_modules", name, "package.json")
      const { version } = JSON.parse(readFileSync(manifest, "utf8"))
      return `${name}@${version}/${rest.slice(name.split("/").length).join("/")}`
    }
    const origin = origins.find(([dir]) => absolute.startsWith(`${dir}${sep}`))
    if (origin === undefined) throw new Error(`a bundled source from nowhere known: ${source}`)
    const shipped = join("sources", origin[1], relative(origin[0], absolute))
    mkdirSync(dirname(join(staging, shipped)), { recursive: true })
    copyFileSync(absolute, join(staging, shipped))
    return shipped.split(sep).join("/")
  })
  // a bundled dependency's code is left unmapped (its frames name the bundle's own line, a file that exists):
  // its sources are not shipped (Effect's alone would be 5.7 MB)
  const dependency = map.sources.map((source) => /^(@[^/]+\/)?[^/@]+@[^/]+\//.test(source))
  map.mappings = withoutSources(map.mappings, dependency)
  map.sourceRoot = ""
  writeFileSync(mapFile, JSON.stringify(map))
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Base64 VLQ (the source map format): a segment's fields. */
const decodeSegment = (text) => {
  const fields = []
  let value = 0
  let shift = 0
  for (const char of text) {
    const digit = BASE64.indexOf(char)
    value += (digit & 31) << shift
    if (digit & 32) shift += 5
    else {
      fields.push(value & 1 ? -(value >>> 1) : value >>> 1)
      value = 0
      shift = 0
    }
  }
  return fields
}

const encodeField = (field) => {
  let value = field < 0 ? (-field << 1) | 1 : field << 1
  let text = ""
  do {
    let digit = value & 31
    value >>>= 5
    if (value > 0) digit |= 32
    text += BASE64[digit]
  } while (value > 0)
  return text
}

/**
 * `mappings` with every segment into a source of `drop` (by index) made generated-only (no original position):
 * the fields are absolute once decoded, and relative again once encoded.
 */
const withoutSources = (mappings, drop) => {
  const state = [0, 0, 0, 0]
  const out = [0, 0, 0, 0]
  return mappings
    .split(";")
    .map((line) => {
      let column = 0
      let outColumn = 0
      return line
        .split(",")
        .filter((segment) => segment !== "")
        .map((segment) => {
          const fields = decodeSegment(segment)
          column += fields[0]
          let absolute
          if (fields.length >= 4) {
            for (let i = 1; i < 4; i++) state[i - 1] += fields[i]
            if (fields.length >= 5) state[3] += fields[4]
            absolute = [state[0], state[1], state[2], fields.length >= 5 ? state[3] : undefined]
          }
          const head = encodeField(column - outColumn)
          outColumn = column
          if (absolute === undefined || drop[absolute[0]]) return head
          let text = head
          for (let i = 0; i < 3; i++) {
            text += encodeField(absolute[i] - out[i])
            out[i] = absolute[i]
          }
          if (absolute[3] !== undefined) {
            text += encodeField(absolute[3] - out[3])
            out[3] = absolute[3]
          }
          return text
        })
        .join(",")
    })
    .join(";")
}
// (the maps' paths are relative to dist, where the bundles are moved)
shipSources(join(staging, "index.cjs.map"))
shipSources(join(staging, "browser.js.map"))

mkdirSync(dist, { recursive: true })
rmSync(join(dist, "chunks"), { recursive: true, force: true })
rmSync(join(dist, "sources"), { recursive: true, force: true })
for (const file of ["index.js", "index.cjs", "index.cjs.map", "browser.js", "browser.js.map", "sources"])
  renameSync(join(staging, file), join(dist, file))
rmSync(join(dist, "index.js.map"), { force: true })
rmSync(staging, { recursive: true, force: true })
if (!existsSync(join(dist, "index.d.ts"))) throw new Error("dist/index.d.ts is missing: run `tsc -b` first")
// copied aside and renamed in, so that a test reading dist never sees half a file
copyFileSync(join(dist, "index.d.ts"), join(dist, `index.d.cts.tmp-${process.pid}`))
renameSync(join(dist, `index.d.cts.tmp-${process.pid}`), join(dist, "index.d.cts"))
// the licence notices of what the bundles embed (Effect and its dependencies), shipped beside them: one file for both
writeNotices(
  { inputs: { ...metafile.inputs, ...browserBuild.metafile.inputs } },
  { workingDir: root, out: join(dist, "THIRD_PARTY_NOTICES") }
)
