#!/usr/bin/env node
/**
 * Type-checks every ```ts block of README.md, of each package's README.md and of the guides in docs/ as written (the
 * README test, `scripts/test/readme.test.ts`, runs this).
 *
 * Marker convention (the first line of a block):
 * - no marker: the block is a complete ES module (top-level `await` is fine) and must compile as is, with its own
 *   imports. Each block is its own module: names do not leak from one block into the next.
 * - `// fragment: Effect.gen`: the block's statements belong inside a generator (`yield*` at top level). The extractor
 *   keeps the block's `import` lines at the top and wraps the rest in `Effect.gen(function* () { ... })`, so the
 *   block must still import everything it uses, `Effect` included.
 * Blocks that are not TypeScript to compile (signatures, shell) use another fence language (```text, ```sh).
 *
 * Each block is written to scripts/build/readme/<readme>/block-NN.ts and checked with the repo's `tsc` (strict, NodeNext,
 * exactOptionalPropertyTypes; unused names allowed), workspace packages resolved to their sources. Errors are
 * reported as `README.md:<line> (block <n>, "<section>"): <message>`. Exit code 1 on any error.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..")
const FRAGMENT = "// fragment: Effect.gen"

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
  if (block.lines[0]?.trim() === FRAGMENT) {
    const body = []
    block.lines.forEach((line, i) => {
      if (i === 0) return
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

const tsconfig = (out) => ({
  extends: relative(out, join(root, "tsconfig.base.json")),
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

/** README.md and every package's README.md: the files `check` covers by default. */
export const readmes = () => [
  join(root, "README.md"),
  ...readdirSync(join(root, "packages"))
    .map((name) => join(root, "packages", name, "README.md"))
    .filter((path) => existsSync(path))
]

/** The guides in docs/ (`docs/<topic>.md`): their TypeScript blocks must compile too. */
export const docPages = () =>
  readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(root, "docs", name))

/**
 * The guides whose blocks compile against the Effect 3 line: all but the Effect 4 line's own pages, which that
 * line's suite type-checks against effect 4 (packages/effect4/service-sdk/test/docs/effect4Guide.test.ts, and
 * test/browser/docs.test.ts for the browser page).
 */
const EFFECT4_PAGES = [join("docs", "effect4.md"), join("docs", "browser.md")]
export const effect3DocPages = () => docPages().filter((path) => !EFFECT4_PAGES.some((page) => path.endsWith(page)))

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

/**
 * Type-checks the blocks of one README: `{ blocks, errors }`. Asynchronous, so that a test worker stays responsive
 * while `tsc` runs (a long synchronous call starves vitest's worker RPC on a loaded machine).
 */
export const check = async (readmePath = join(root, "README.md")) => {
  const name = relative(root, readmePath).startsWith("..") ? readmePath : relative(root, readmePath)
  const out = join(root, "scripts", "build", "readme", name.replace(/[^A-Za-z0-9]+/g, "-"))
  const blocks = extractBlocks(readFileSync(readmePath, "utf8"))
  if (blocks.length === 0) return { blocks: 0, errors: [] }
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, "tsconfig.json"), JSON.stringify(tsconfig(out), null, 2))
  const byFile = new Map()
  for (const block of blocks) {
    const file = `block-${String(block.index).padStart(2, "0")}.ts`
    const { map, text } = toModule(block)
    writeFileSync(join(out, file), text)
    byFile.set(file, { block, map })
  }
  const tsc = join(root, "node_modules", ".bin", "tsc")
  const result = await run(tsc, ["-p", join(out, "tsconfig.json"), "--pretty", "false"], { cwd: out })
  const errors = []
  for (const line of `${result.stdout}${result.stderr}`.split("\n")) {
    const match = /^(?:.*[/\\])?(block-\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line)
    if (match) {
      const { block, map } = byFile.get(match[1])
      const readmeLine = map[Number(match[2]) - 1] || block.startLine
      errors.push(`${name}:${readmeLine} (block ${block.index}, "${block.section}"): ${match[4]}`)
    } else if (/error TS/.test(line)) errors.push(line)
    else if (line.trim() !== "" && errors.length > 0) errors[errors.length - 1] += `\n  ${line.trim()}`
  }
  if (result.status !== 0 && errors.length === 0) errors.push(`tsc failed: ${result.stdout}${result.stderr}`)
  return { blocks: blocks.length, errors }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = false
  for (const path of [...readmes(), ...effect3DocPages()]) {
    const { blocks, errors } = await check(path)
    for (const error of errors) console.error(error)
    console.log(`${relative(root, path)}: ${blocks} TypeScript blocks, ${errors.length} errors`)
    failed ||= errors.length > 0
  }
  process.exit(failed ? 1 : 0)
}
