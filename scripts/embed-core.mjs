#!/usr/bin/env node
/**
 * `prepack` of the tsc-built packages (`@service-sdk/effect` and `@service-sdk/redis`, both lines): the private core
 * `@service-sdk/shared` is not published, so the modules of it that the package's `dist/` imports (and what those
 * import in turn) are copied from `packages/shared/dist` into `dist/internal/core/`, and each
 * `"@service-sdk/shared/<name>"` specifier in `dist/**\/*.js` and `*.d.ts` becomes a relative path to that copy.
 * The tarball then installs alone. The sources keep importing the core by name (one original, nothing generated in
 * `src/`). `--restore` (postpack) puts `dist/` back as `tsc -b` left it (the rewritten files' texts are kept in
 * `build/embed-core.json` in between): an incremental build must never see outputs it did not write.
 *
 *   node <root>/scripts/embed-core.mjs             (in the package's folder; npm runs it as prepack)
 *   node <root>/scripts/embed-core.mjs --restore   (postpack)
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(import.meta.dirname, "..")
const coreDist = join(root, "packages", "shared", "dist")
const specifier = /(["'])@service-sdk\/shared\/([\w-]+)\1/g

const filesOf = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return filesOf(path)
    return /\.(js|d\.ts)$/.test(entry.name) ? [path] : []
  })

/** The core modules `names` import, transitively (`./<name>.js` inside the core). */
const withImports = (names) => {
  const all = new Set()
  const add = (name) => {
    if (all.has(name)) return
    const file = join(coreDist, `${name}.js`)
    if (!existsSync(file)) throw new Error(`@service-sdk/shared/${name} is not built (${file}): run tsc -b first`)
    all.add(name)
    for (const match of readFileSync(file, "utf8").matchAll(/["']\.\/([\w-]+)\.js["']/g)) add(match[1])
  }
  for (const name of names) add(name)
  return [...all].sort()
}

const backupOf = (packageDir) => join(packageDir, "build", "embed-core.json")

export const restore = (packageDir) => {
  const backup = backupOf(packageDir)
  if (!existsSync(backup)) return 0
  const originals = JSON.parse(readFileSync(backup, "utf8"))
  for (const [file, text] of Object.entries(originals)) writeFileSync(file, text)
  rmSync(join(packageDir, "dist", "internal", "core"), { recursive: true, force: true })
  rmSync(backup)
  return Object.keys(originals).length
}

export const embedCore = (packageDir) => {
  restore(packageDir)
  const dist = join(packageDir, "dist")
  const core = join(dist, "internal", "core")
  const originals = {}
  const files = filesOf(dist).filter((file) => !file.startsWith(`${core}/`))
  const needed = new Set()
  for (const file of files) for (const match of readFileSync(file, "utf8").matchAll(specifier)) needed.add(match[2])
  const names = withImports(needed)
  mkdirSync(core, { recursive: true })
  for (const name of names) {
    for (const ext of [".js", ".d.ts"]) copyFileSync(join(coreDist, `${name}${ext}`), join(core, `${name}${ext}`))
  }
  for (const file of files) {
    const text = readFileSync(file, "utf8")
    const rewritten = text.replace(specifier, (_, quote, name) => {
      const path = relative(dirname(file), join(core, `${name}.js`))
      return `${quote}${path.startsWith(".") ? path : `./${path}`}${quote}`
    })
    if (rewritten !== text) {
      originals[file] = text
      writeFileSync(file, rewritten)
    }
  }
  mkdirSync(dirname(backupOf(packageDir)), { recursive: true })
  writeFileSync(backupOf(packageDir), JSON.stringify(originals))
  return names
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--restore")) restore(process.cwd())
  else {
    const names = embedCore(process.cwd())
    console.error(`embedded @service-sdk/shared: ${names.join(", ") || "(nothing)"}`)
  }
}
