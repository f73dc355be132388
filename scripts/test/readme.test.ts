/**
 * The README test: every ```ts block of README.md is type-checked as written (`scripts/readme-check.mjs`).
 *
 * Writing a README block:
 * - A ```ts block is a complete ES module: it imports everything it uses (top-level `await` is fine) and compiles
 *   on its own; blocks do not see each other's names.
 * - A block whose first line is `// fragment: Effect.gen` is the body of `Effect.gen(function* () { ... })`: its
 *   `import` lines stay at the top, the rest is wrapped (so `yield*` works). It still imports what it uses.
 * - Anything that is not TypeScript to compile (a signature listing, a shell line) uses another fence (```text).
 * A failure names the README line, the block number and its section: `README.md:120 (block 4, "Promise"): error ...`.
 * Run it alone with `node scripts/readme-check.mjs`.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishablePackages } from "../pack.mjs"
// @ts-expect-error: a plain ES module without types
import { check, docPages, extractBlocks, readmes, toModule } from "../readme-check.mjs"

describe("README", () => {
  it("every TypeScript block of README.md compiles as written", async () => {
    const { blocks, errors } = await check()
    expect(blocks).toBeGreaterThan(5)
    expect(errors.join("\n")).toBe("")
  }, 120_000)

  it("every package has a README whose TypeScript blocks compile", async () => {
    const paths: ReadonlyArray<string> = readmes().slice(1)
    // every publishable package (as `npm run pack` finds them) ships a README
    const publishable = publishablePackages().map((p) => p.dir.split("/").at(-1)!)
    expect(publishable).toContain("service-sdk")
    expect(paths.map((path) => path.split("/").at(-2)).sort()).toEqual(expect.arrayContaining(publishable))
    const results = await Promise.all(paths.map((path) => check(path)))
    expect(results.flatMap(({ errors }) => errors).join("\n")).toBe("")
  }, 120_000)

  it("every guide in docs/ has TypeScript blocks that compile (docs/service-rules.md among them)", async () => {
    const paths: ReadonlyArray<string> = docPages()
    expect(paths.some((path) => path.endsWith("service-rules.md"))).toBe(true)
    const results = await Promise.all(paths.map((path) => check(path)))
    expect(results.reduce((sum, { blocks }) => sum + blocks, 0)).toBeGreaterThanOrEqual(4)
    expect(results.flatMap(({ errors }) => errors).join("\n")).toBe("")
  }, 120_000)

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
    expect(errors[0]).toMatch(/README\.md:5 \(block 1, "Broken"\): error TS2322/)
    expect(errors[1]).toMatch(/README\.md:11 \(block 2, "Broken"\): error TS2322/)
  }, 120_000)

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
