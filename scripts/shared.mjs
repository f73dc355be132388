#!/usr/bin/env node
/**
 * The plain-TypeScript modules both Effect lines use (`packages/shared/src`: no Effect in them) are kept in that one
 * place and copied into each package that ships them, so that every published tarball is self-contained:
 *
 *   node scripts/shared.mjs          copy them (npm run shared)
 *   node scripts/shared.mjs --check  exit 1 when a copy differs from its original (a test runs this check too)
 *
 * Each copy starts with a one-line header naming its original; the rest is byte for byte the original. The copies are
 * not in git (.gitignore): the root's `npm install` (postinstall) and `npm test` make them, so the original is the
 * only place to edit. A package gets only the modules it imports ({@link neededBy}).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(import.meta.dirname, "..")
export const sharedDir = join(root, "packages", "shared", "src")
/** The packages that ship a copy, each in its `src/internal/shared/`. */
export const copyDirs = [
  join(root, "packages", "service-sdk", "src", "internal", "shared"),
  join(root, "packages", "redis", "src", "internal", "shared"),
  join(root, "packages", "effect4", "service-sdk", "src", "internal", "shared"),
  join(root, "packages", "effect4", "redis", "src", "internal", "shared"),
  join(root, "packages", "cli", "src", "internal", "shared")
]

export const header = (file) =>
  `// Copied from packages/shared/src/${file} by scripts/shared.mjs: edit the original there, then \`npm run shared\`.\n`

const originals = () => readdirSync(sharedDir).filter((file) => file.endsWith(".ts"))

const typescriptFiles = (dir, skip) => {
  let entries = []
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {}
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name)
    if (path === skip) return []
    if (entry.isDirectory()) return typescriptFiles(path, skip)
    return entry.name.endsWith(".ts") ? [path] : []
  })
}

/**
 * The shared modules a package ships: those its own sources and tests import (`…/shared/<name>.js`), with what
 * those import in turn (`./<name>.js`). A package carries no module it does not use.
 */
export const neededBy = (copyDir) => {
  const packageDir = dirname(dirname(dirname(copyDir)))
  const available = new Set(originals())
  const needed = new Set()
  const add = (name) => {
    const file = `${name}.ts`
    if (!available.has(file) || needed.has(file)) return
    needed.add(file)
    for (const match of readFileSync(join(sharedDir, file), "utf8").matchAll(/["']\.\/([\w-]+)\.js["']/g)) add(match[1])
  }
  for (const sub of ["src", "test"]) {
    for (const path of typescriptFiles(join(packageDir, sub), copyDir)) {
      for (const match of readFileSync(path, "utf8").matchAll(/["'][^"'\n]*\/shared\/([\w-]+)\.js["']/g)) add(match[1])
    }
  }
  return [...needed].sort()
}

/** The copies that differ from their original (or are missing, or have no original). */
export const differences = () => {
  const found = []
  for (const dir of copyDirs) {
    const expected = new Set(neededBy(dir))
    let present = []
    try {
      present = readdirSync(dir).filter((file) => file.endsWith(".ts"))
    } catch {}
    for (const file of present) if (!expected.has(file)) found.push(join(dir, file))
    for (const file of expected) {
      const want = header(file) + readFileSync(join(sharedDir, file), "utf8")
      let have
      try {
        have = readFileSync(join(dir, file), "utf8")
      } catch {}
      if (have !== want) found.push(join(dir, file))
    }
  }
  return found
}

export const copy = () => {
  for (const dir of copyDirs) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    for (const file of neededBy(dir)) {
      writeFileSync(join(dir, file), header(file) + readFileSync(join(sharedDir, file), "utf8"))
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--check")) {
    const found = differences()
    for (const file of found) console.error(`differs from packages/shared/src: ${file.replace(`${root}/`, "")}`)
    process.exit(found.length === 0 ? 0 : 1)
  }
  copy()
}
