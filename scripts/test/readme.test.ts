/**
 * The README test: every ```ts block of README.md is type-checked as written (`scripts/readme-check.mjs`).
 *
 * Writing a README block:
 * - A ```ts block is a complete ES module: it imports everything it uses (top-level `await` is fine) and compiles
 *   on its own; blocks do not see each other's names.
 * - A block whose first line is `// effect4` is Effect 4 code, checked in the nested Effect 4 project (effect 4.1, its
 *   tsc and tsconfig); `// effect3` (or no marker) is Effect 3 code, checked with the root's. docs/effect4.md and the
 *   Effect 4 packages' READMEs default to Effect 4. A guide whose code differs between the lines pairs its blocks:
 *   the Effect 4 block first, then the Effect 3 one.
 * - A block whose first line (after a line marker) is `// fragment: Effect.gen` is the body of
 *   `Effect.gen(function* () { ... })`: its `import` lines stay at the top, the rest is wrapped (so `yield*` works).
 *   It still imports what it uses.
 * - Anything that is not TypeScript to compile (a signature listing, a shell line) uses another fence (```text).
 * A failure names the README line, the block number and its section: `README.md:120 (block 4, "Promise"): error ...`.
 * Run it alone with `node scripts/readme-check.mjs`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishablePackages } from "../pack.mjs"
// @ts-expect-error: a plain ES module without types
import {
  check,
  checkPages,
  docPages,
  extractBlocks,
  lineOf,
  pageLine,
  readmes,
  run,
  toModule
} from "../readme-check.mjs"

const root = join(import.meta.dirname, "..", "..")
const effect4Dir = join(root, "packages", "effect4")

type Block = { readonly lines: ReadonlyArray<string>; readonly section: string; readonly startLine: number }
type Checked = { blocks: number; lines: { effect3: number; effect4: number }; errors: ReadonlyArray<string> }

/** The guides whose Effect code differs between the lines: each shows both (paired blocks, Effect 4 first). */
const pairedGuides = [
  "testing.md",
  "sign-in.md",
  "caches.md",
  "production.md",
  "effect.md",
  "redis.md",
  "service-rules.md",
  "web-apps.md"
]

/** Writes `files` into `dir` with a vitest config that resolves workspace packages to their sources. */
const testProject = (dir: string, files: ReadonlyArray<readonly [string, string]>) => {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const [name, text] of files) writeFileSync(join(dir, name), text)
  const conditions = ["source", "import", "node", "default"]
  writeFileSync(
    join(dir, "vitest.config.mjs"),
    `export default ${JSON.stringify({
      resolve: { conditions },
      ssr: { resolve: { conditions, externalConditions: conditions } },
      test: { include: files.map(([name]) => name) }
    })}\n`
  )
}

/** docs/testing.md's test files of one line: every block of that line that imports `@effect/vitest`. */
const testingFiles = (line: "effect3" | "effect4") =>
  (extractBlocks(readFileSync(join(root, "docs", "testing.md"), "utf8")) as ReadonlyArray<Block>)
    .filter((block) => lineOf(block) === line && block.lines.some((l) => l.includes('from "@effect/vitest"')))
    .map((block, i) => [`guide${i + 1}.test.ts`, `${block.lines.join("\n")}\n`] as const)

/** How many tests the files declare (`it(`, `it.effect(`, `it.live(`). */
const declaredTests = (files: ReadonlyArray<readonly [string, string]>) =>
  files.reduce((sum, [, text]) => sum + [...text.matchAll(/^\s*it(\.effect|\.live)?\(/gm)].length, 0)

describe("README", () => {
  it("every TypeScript block of README.md compiles as written", async () => {
    const { blocks, errors, lines }: Checked = await check()
    // the first screen: a first Effect 4 program, a first Effect 3 one and a first plain one
    expect(blocks).toBeGreaterThanOrEqual(3)
    expect(lines.effect4).toBeGreaterThanOrEqual(1)
    expect(errors.join("\n")).toBe("")
  }, 180_000)

  it("every TypeScript block of the guides in docs/ compiles as written, against its own line", async () => {
    const paths: ReadonlyArray<string> = docPages()
    expect(paths.map((path) => path.split("/").at(-1))).toEqual(
      expect.arrayContaining([
        "install.md",
        "testing.md",
        "production.md",
        "redis.md",
        "performance.md",
        "cli.md",
        "service-rules.md",
        "effect4.md"
      ])
    )
    // all pages in one tsc run per line (a tsc's start-up is most of its cost)
    const results: ReadonlyArray<Checked> = await checkPages(paths, "docs")
    expect(results.reduce((sum, { blocks }) => sum + blocks, 0)).toBeGreaterThan(15)
    expect(results.reduce((sum, { lines }) => sum + lines.effect4, 0)).toBeGreaterThan(8)
    expect(results.flatMap(({ errors }) => errors).join("\n")).toBe("")
  }, 600_000)

  it.each(pairedGuides)("%s shows both lines, the Effect 4 block first", (guide) => {
    const blocks: ReadonlyArray<Block> = extractBlocks(readFileSync(join(root, "docs", guide), "utf8"))
    // every Effect block of a paired guide says which line it is
    const effectBlocks = blocks.filter((block) =>
      block.lines.some((l) => /from "(effect|effect\/[a-z]+|@service-sdk\/effect)"/.test(l))
    )
    for (const block of effectBlocks) {
      expect(["// effect4", "// effect3"], `${guide}:${block.startLine}`).toContain(block.lines[0]?.trim())
    }
    expect(effectBlocks.filter((block) => lineOf(block) === "effect4").length, guide).toBeGreaterThan(0)
    expect(effectBlocks.filter((block) => lineOf(block) === "effect3").length, guide).toBeGreaterThan(0)
    expect(lineOf(effectBlocks[0]!), `${guide}: the Effect 4 block comes first`).toBe("effect4")
  })

  it("the README's first screen: two commands, the installs by name, a first Effect 4, Effect 3 and plain example", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const firstScreen = readme.split("\n").slice(0, 100).join("\n")
    expect(firstScreen).toContain("npm install && npm start")
    expect(firstScreen).toContain("npm test")
    expect(firstScreen).toContain('"type": "module"')
    // a command that works as pasted, tsx installed or not (npx asks before it installs a package; --yes does not)
    expect(firstScreen).toMatch(/npx --yes tsx app\.ts/)
    expect(firstScreen).toContain("npm install @service-sdk/effect effect")
    expect(firstScreen).toContain("npm install @service-sdk/effect@effect3")
    expect(firstScreen).toContain(
      "SERVICE_SDK_AUTH_URL=http://127.0.0.1:4000 SERVICE_SDK_API_URL=http://127.0.0.1:4000/v1"
    )
    const blocks: ReadonlyArray<Block> = extractBlocks(firstScreen)
    expect(blocks.map((block) => lineOf(block))).toEqual(["effect4", "effect3", "effect3"])
    expect(blocks[0]!.lines.some((line) => line.includes('from "effect/http"'))).toBe(true)
    expect(blocks[1]!.lines.some((line) => line.includes('from "@effect/platform-node"'))).toBe(true)
    expect(blocks[2]!.lines.some((line) => line.includes('from "@service-sdk/promise"'))).toBe(true)
  })

  it("every relative link of README.md, the guides and the example's README names a file that exists", () => {
    const files = [join(root, "README.md"), ...docPages(), join(root, "examples", "web-app", "README.md")]
    const broken = files.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1]!)
        .filter((link) => !/^[a-z]+:/.test(link))
        .filter((link) => !existsSync(join(dirname(file), link)))
        .map((link) => `${file.slice(root.length + 1)}: ${link}`)
    )
    expect(broken).toEqual([])
  })

  it("docs/testing.md's Effect 3 test files run and pass (vitest 3, @effect/vitest 0.x)", async () => {
    const files = testingFiles("effect3")
    expect(files.length).toBeGreaterThanOrEqual(2)
    const dir = join(root, "scripts", "build", "readme-run")
    testProject(dir, files)
    const ran: { status: number | null; stdout: string; stderr: string } = await run(
      join(root, "node_modules", ".bin", "vitest"),
      ["run", "--config", "vitest.config.mjs"],
      { cwd: dir, env: { ...process.env, CI: "1", NO_COLOR: "1" } }
    )
    const count = declaredTests(files)
    expect(`${ran.stdout}${ran.stderr}`).toMatch(new RegExp(`Tests\\s+${count} passed \\(${count}\\)`))
    expect(ran.status).toBe(0)
  }, 180_000)

  it("docs/testing.md's Effect 4 test files run and pass (vitest 5, @effect/vitest 4, the line's Node)", async () => {
    const files = testingFiles("effect4")
    expect(files.length).toBeGreaterThanOrEqual(2)
    const dir = join(effect4Dir, "build", "readme-run")
    testProject(dir, files)
    const ran: { status: number | null; stdout: string; stderr: string } = await run(
      join(effect4Dir, "node_modules", ".bin", "node"),
      [join(effect4Dir, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.config.mjs"],
      { cwd: dir, env: { ...process.env, CI: "1", NO_COLOR: "1" } }
    )
    const count = declaredTests(files)
    expect(`${ran.stdout}${ran.stderr}`).toMatch(new RegExp(`Tests\\s+${count} passed \\(${count}\\)`))
    expect(ran.status).toBe(0)
  }, 180_000)

  it("every package has a README whose TypeScript blocks compile", async () => {
    const paths: ReadonlyArray<string> = readmes().slice(1)
    // every publishable package (as `npm run pack` finds them) ships a README
    const publishable = publishablePackages().map((p) => p.dir.split("/").at(-1)!)
    expect(publishable).toContain("service-sdk")
    expect(paths.map((path) => path.split("/").at(-2)).sort()).toEqual(expect.arrayContaining(publishable))
    // the Effect 4 packages' READMEs are checked against the Effect 4 line
    expect(paths.filter((path) => pageLine(path) === "effect4").length).toBeGreaterThanOrEqual(2)
    const results: ReadonlyArray<Checked> = await checkPages(paths, "packages")
    expect(results.flatMap(({ errors }) => errors).join("\n")).toBe("")
  }, 300_000)

  it("reports a broken block with its README line and section", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readme-"))
    const readme = join(dir, "README.md")
    writeFileSync(
      readme,
      [
        "# x",
        "## Broken",
        "```ts",
        'import { Effect } from "effect"',
        "const n: number = Effect.succeed(1)",
        "```",
        "```ts",
        "// fragment: Effect.gen",
        'import { Effect } from "effect"',
        "const one = yield* Effect.succeed(1)",
        "const s: string = one",
        "```"
      ].join("\n")
    )
    const { blocks, errors } = await check(readme)
    expect(blocks).toBe(2)
    expect(errors).toHaveLength(2)
    expect(errors[0]).toMatch(/README\.md:5 \(block 1, "Broken", effect3\): error TS2322/)
    expect(errors[1]).toMatch(/README\.md:11 \(block 2, "Broken", effect3\): error TS2322/)
  }, 120_000)

  it("checks a block marked `// effect4` against Effect 4 and an Effect 3 block against Effect 3", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readme-"))
    const effect4Code = [
      'import { Effect, Layer } from "effect"',
      'import { FetchHttpClient } from "effect/http"',
      'import { ServiceClient } from "@service-sdk/effect"',
      "export const live = ServiceClient.layerClientCredentials().pipe(Layer.provide(FetchHttpClient.layer))",
      "export const n: Effect.Effect<number> = Effect.succeed(1)"
    ]
    const effect3Code = [
      'import { NodeHttpClient } from "@effect/platform-node"',
      'import { Layer } from "effect"',
      'import { ClientCredentials, ServiceClient } from "@service-sdk/effect"',
      "export const live = ServiceClient.layer().pipe(",
      "  Layer.provide(ClientCredentials.layer()),",
      "  Layer.provide(NodeHttpClient.layerUndici)",
      ")"
    ]
    const page = (first: string, second: string) =>
      ["# x", "## Paired", "```ts", first, ...effect4Code, "```", "```ts", second, ...effect3Code, "```"].join("\n")
    const right = join(dir, "right.md")
    writeFileSync(right, page("// effect4", "// effect3"))
    const ok: Checked = await check(right)
    expect(ok.lines).toEqual({ effect3: 1, effect4: 1 })
    expect(ok.errors).toEqual([])
    // the same code under the other line's markers fails twice: `effect/http` is Effect 4's, platform-node 0.x Effect 3's
    const wrong = join(dir, "wrong.md")
    writeFileSync(wrong, page("// effect3", "// effect4"))
    const failed: Checked = await check(wrong)
    expect(failed.errors.some((error) => /wrong\.md:\d+ \(block 1, "Paired", effect3\)/.test(error))).toBe(true)
    expect(failed.errors.some((error) => /wrong\.md:\d+ \(block 2, "Paired", effect4\)/.test(error))).toBe(true)
  }, 180_000)

  it("checks many pages in one tsc run per line, and names the page of each error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readme-"))
    const broken = (title: string, marker: string) => [
      "# x",
      `## ${title}`,
      "```ts",
      marker,
      'import { Effect } from "effect"',
      "const n: number = Effect.succeed(1)",
      "```"
    ]
    writeFileSync(join(dir, "a.md"), broken("A", "// effect3").join("\n"))
    writeFileSync(join(dir, "b.md"), [...broken("B", "// effect4"), "```ts", "export const ok = 1", "```"].join("\n"))
    const [a, b]: ReadonlyArray<Checked> = await checkPages([join(dir, "a.md"), join(dir, "b.md")], "two-pages")
    expect(a!.errors).toHaveLength(1)
    expect(a!.errors[0]).toMatch(/a\.md:6 \(block 1, "A", effect3\): error TS2322/)
    expect(b!.blocks).toBe(2)
    expect(b!.lines).toEqual({ effect3: 1, effect4: 1 })
    expect(b!.errors).toHaveLength(1)
    expect(b!.errors[0]).toMatch(/b\.md:6 \(block 1, "B", effect4\): error TS2322/)
  }, 180_000)

  it("reads a block's line from its marker, else from the page", () => {
    const block = (...lines: ReadonlyArray<string>) => ({ lines })
    expect(lineOf(block("// effect4", "import x"))).toBe("effect4")
    expect(lineOf(block("// effect3", "import x"), "effect4")).toBe("effect3")
    expect(lineOf(block("import x"))).toBe("effect3")
    expect(lineOf(block("import x"), "effect4")).toBe("effect4")
    expect(lineOf(block("import x", "// effect4"))).toBe("effect3") // a marker counts only on top
    expect(pageLine(join(root, "docs", "effect4.md"))).toBe("effect4")
    expect(pageLine(join(root, "packages", "effect4", "redis", "README.md"))).toBe("effect4")
    expect(pageLine(join(root, "docs", "testing.md"))).toBe("effect3")
  })

  it("wraps a fragment in Effect.gen under a line marker too", () => {
    const [block] = extractBlocks(
      ["```ts", "// effect4", "// fragment: Effect.gen", 'import { A } from "a"', "yield* A", "```"].join("\n")
    )
    expect(lineOf(block)).toBe("effect4")
    expect(toModule(block).text).toBe(
      'import { A } from "a"\nexport const fragment = Effect.gen(function* () {\n  yield* A\n})\nexport {}\n'
    )
  })

  it("wraps a fragment in Effect.gen and keeps its imports on top", () => {
    const [block] = extractBlocks(
      ["```ts", "// fragment: Effect.gen", 'import { A } from "a"', "yield* A", "```"].join("\n")
    )
    const { map, text } = toModule(block)
    expect(text).toBe(
      'import { A } from "a"\nexport const fragment = Effect.gen(function* () {\n  yield* A\n})\nexport {}\n'
    )
    expect(map).toEqual([3, 0, 4, 0, 0])
  })
})
