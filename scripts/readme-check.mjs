#!/usr/bin/env node
/**
 * Type-checks every ```ts block of README.md, of each package's README.md and of the guides in docs/ as written, each
 * against its own Effect line (the README test, `scripts/test/readme.test.ts`, runs this).
 *
 * Marker convention (the first lines of a block, in this order; each is a whole line):
 * - `// effect4`: the block is Effect 4 code (`@service-sdk/effect` 2.x, `effect` 4.1). It is checked inside the
 *   nested Effect 4 project (`packages/effect4`: its `effect`, `@effect/vitest` 4, its `tsc` and its
 *   `tsconfig.base.json`), where `@service-sdk/effect` is the Effect 4 line's sources.
 * - `// effect3`: the block is Effect 3 code (`@service-sdk/effect` 1.x), checked with the root's `tsc` and
 *   `tsconfig.base.json`. It is the default, so the marker is optional; guides write it in paired blocks (an Effect 4
 *   block first, then its Effect 3 twin) so that a reader sees which is which.
 * - `// fragment: Effect.gen`: the block's statements belong inside a generator (`yield*` at top level). The extractor
 *   keeps the block's `import` lines at the top and wraps the rest in `Effect.gen(function* () { ... })`, so the
 *   block must still import everything it uses, `Effect` included. Combines with a line marker above it.
 * - no marker: a complete ES module (top-level `await` is fine) of the page's default line: Effect 4 for
 *   `docs/effect4.md`, `docs/browser.md` and `docs/runtimes.md` (the Effect 4 line's own pages), Effect 3 everywhere else. Each block is its own module: names
 *   do not leak from one block into the next.
 * Blocks that are not TypeScript to compile (signatures, shell, a migration diff) use another fence language (```text,
 * ```sh, ```diff).
 *
 * Each block is written to <project>/build/readme/<readme>/block-NN.ts (<project>: the repository for Effect 3,
 * packages/effect4 for Effect 4) and checked with that project's `tsc` (strict, NodeNext, exactOptionalPropertyTypes;
 * unused names allowed), workspace packages resolved to their sources. Errors are reported as
 * `README.md:<line> (block <n>, "<section>", effect4): <message>`. Exit code 1 on any error.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..")
const effect4Root = join(root, "packages", "effect4")
const FRAGMENT = "// fragment: Effect.gen"
const LINE_MARKERS = { "// effect3": "effect3", "// effect4": "effect4" }

/** The line a block is checked against: its marker, else the page's default. */
export const lineOf = (block, pageDefault = "effect3") => {
  for (const line of block.lines) {
    const marker = LINE_MARKERS[line.trim()]
    if (marker) return marker
    if (!line.trim().startsWith("//")) break
  }
  return pageDefault
}

/**
 * The default line of a page: Effect 4 for docs/effect4.md, browser.md, runtimes.md and the Effect 4 packages' READMEs, Effect 3 for every
 * other page.
 */
export const pageLine = (path) =>
  path.endsWith(join("docs", "effect4.md")) ||
  path.endsWith(join("docs", "browser.md")) ||
  path.endsWith(join("docs", "runtimes.md")) ||
  path.startsWith(`${effect4Root}/`)
    ? "effect4"
    : "effect3"

/** A fragment: its first line that is not a line marker is `// fragment: Effect.gen`. */
const isFragment = (block) => block.lines.find((line) => !LINE_MARKERS[line.trim()])?.trim() === FRAGMENT

/** The ```ts blocks of a Markdown text: `{ index, startLine (1-based line of the first code line), section, lines }`. */
export const extractBlocks = (markdown) => {
  const blocks = []
  const lines = markdown.split("\n")
  let section = "(top)"
  let current
  lines.forEach((line, i) => {
    if (current) {
      if (/^```\s*$/.test(line)) {
        blocks.push(current)
        current = undefined
      } else current.lines.push(line)
      return
    }
    if (/^#{1,6} /.test(line)) section = line.replace(/^#+ /, "")
    const fence = /^```(\S*)/.exec(line)
    if (fence) current = { ts: fence[1] === "ts" || fence[1] === "typescript", startLine: i + 2, section, lines: [] }
  })
  return blocks.filter((block) => block.ts).map((block, i) => ({ ...block, index: i + 1 }))
}

/** The module text of one block and, for each of its lines, the README line it came from (0: generated). */
export const toModule = (block) => {
  const text = []
  const map = []
  const push = (line, readmeLine) => {
    text.push(line)
    map.push(readmeLine)
  }
  if (isFragment(block)) {
    const body = []
    let header = true
    block.lines.forEach((line, i) => {
      if (header && (LINE_MARKERS[line.trim()] || line.trim() === FRAGMENT)) return
      header = false
      if (/^import /.test(line)) push(line, block.startLine + i)
      else body.push([line, block.startLine + i])
    })
    push("export const fragment = Effect.gen(function* () {", 0)
    for (const [line, readmeLine] of body) push(`  ${line}`, readmeLine)
    push("})", 0)
  } else {
    block.lines.forEach((line, i) => {
      push(line, block.startLine + i)
    })
  }
  push("export {}", 0)
  return { text: `${text.join("\n")}\n`, map }
}

/** Each line's project: where its blocks are written, its `tsc` and the base config its tsconfig extends. */
const projects = {
  effect3: { dir: root, tsc: join(root, "node_modules", ".bin", "tsc"), base: join(root, "tsconfig.base.json") },
  effect4: {
    dir: effect4Root,
    tsc: join(effect4Root, "node_modules", ".bin", "tsc"),
    base: join(effect4Root, "tsconfig.base.json")
  }
}

const tsconfig = (out, base) => ({
  extends: relative(out, base),
  compilerOptions: {
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    noEmit: true,
    noUnusedLocals: false,
    noUnusedParameters: false,
    customConditions: ["source"]
  },
  include: ["*.ts"]
})

/** README.md and every package's README.md (the Effect 4 line's included): the files `check` covers by default. */
export const readmes = () => [
  join(root, "README.md"),
  ...[join(root, "packages"), effect4Root].flatMap((dir) =>
    readdirSync(dir)
      .map((name) => join(dir, name, "README.md"))
      .filter((path) => existsSync(path))
  )
]

/** The guides in docs/ (`docs/<topic>.md`): their TypeScript blocks must compile too. */
export const docPages = () =>
  readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(root, "docs", name))

/** Runs a command without blocking the caller (a test worker stays responsive): `{ status, stdout, stderr }`. */
export const run = (command, args, options = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, options)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

const displayName = (path) => (relative(root, path).startsWith("..") ? path : relative(root, path))

/**
 * Checks one line's blocks, of one page or many, with one run of that line's `tsc` (its start-up is most of the
 * cost): the error lines, mapped back to each page. `entries` are `{ page, block }`, `page` the name errors carry.
 */
const checkLine = async (label, line, entries) => {
  const project = projects[line]
  const out = join(project.dir, "build", "readme", label.replace(/[^A-Za-z0-9]+/g, "-"))
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, "tsconfig.json"), JSON.stringify(tsconfig(out, project.base), null, 2))
  const pages = [...new Set(entries.map(({ page }) => page))]
  const byFile = new Map()
  for (const { page, block } of entries) {
    const prefix = pages.length === 1 ? "" : `p${pages.indexOf(page) + 1}-`
    const file = `${prefix}block-${String(block.index).padStart(2, "0")}.ts`
    const { map, text } = toModule(block)
    writeFileSync(join(out, file), text)
    byFile.set(file, { page, block, map })
  }
  if (!existsSync(project.tsc)) return [`${label}: no ${line} TypeScript at ${project.tsc} (run npm install)`]
  const result = await run(project.tsc, ["-p", join(out, "tsconfig.json"), "--pretty", "false"], { cwd: out })
  const errors = []
  for (const text of `${result.stdout}${result.stderr}`.split("\n")) {
    const match = /^(?:.*[/\\])?((?:p\d+-)?block-\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(text)
    if (match) {
      const { page, block, map } = byFile.get(match[1])
      const readmeLine = map[Number(match[2]) - 1] || block.startLine
      errors.push(`${page}:${readmeLine} (block ${block.index}, "${block.section}", ${line}): ${match[4]}`)
    } else if (/error TS/.test(text)) errors.push(text)
    else if (text.trim() !== "" && errors.length > 0) errors[errors.length - 1] += `\n  ${text.trim()}`
  }
  if (result.status !== 0 && errors.length === 0) errors.push(`tsc (${line}) failed: ${result.stdout}${result.stderr}`)
  return errors
}

/**
 * Type-checks the blocks of several pages, each block against its own line, with one `tsc` run per line for all of
 * them: for each page `{ path, blocks, lines: { effect3, effect4 }, errors }`. Asynchronous, so that a test worker
 * stays responsive while `tsc` runs (a long synchronous call starves vitest's worker RPC on a loaded machine).
 */
export const checkPages = async (paths, label = paths.length === 1 ? displayName(paths[0]) : "pages") => {
  const pages = paths.map((path) => {
    const page = displayName(path)
    const blocks = extractBlocks(readFileSync(path, "utf8"))
    const pageDefault = pageLine(path)
    return { path, page, blocks: blocks.map((block) => ({ page, block, line: lineOf(block, pageDefault) })) }
  })
  const all = pages.flatMap(({ blocks }) => blocks)
  const errors = []
  // one line after the other: two tsc processes at once would double the peak memory on a small machine
  for (const line of ["effect3", "effect4"]) {
    const entries = all.filter((entry) => entry.line === line)
    if (entries.length > 0) errors.push(...(await checkLine(label, line, entries)))
  }
  return pages.map(({ path, page, blocks }) => ({
    path,
    blocks: blocks.length,
    lines: {
      effect3: blocks.filter(({ line }) => line === "effect3").length,
      effect4: blocks.filter(({ line }) => line === "effect4").length
    },
    errors: errors.filter(
      (error) => error.startsWith(`${page}:`) || (!/^\S+:\d+ \(block/.test(error) && path === paths[0])
    )
  }))
}

/** Type-checks the blocks of one README, each against its own line: `{ blocks, lines: { effect3, effect4 }, errors }`. */
export const check = async (readmePath = join(root, "README.md")) => {
  const [{ blocks, errors, lines }] = await checkPages([readmePath])
  return { blocks, lines, errors }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = false
  for (const { path, blocks, errors, lines } of await checkPages([...readmes(), ...docPages()], "all")) {
    for (const error of errors) console.error(error)
    console.log(
      `${relative(root, path)}: ${blocks} TypeScript blocks (Effect 4 ${lines.effect4}, Effect 3 ${lines.effect3}), ${errors.length} errors`
    )
    failed ||= errors.length > 0
  }
  process.exit(failed ? 1 : 0)
}
