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
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishablePackages } from "../pack.mjs"
// @ts-expect-error: a plain ES module without types
import { check, docPages, effect3DocPages, extractBlocks, readmes, run, toModule } from "../readme-check.mjs"

const root = join(import.meta.dirname, "..", "..")

describe("README", () => {
  it("every TypeScript block of README.md compiles as written", async () => {
    const { blocks, errors } = await check()
    // the first screen: a first Effect program and a first plain one
    expect(blocks).toBeGreaterThanOrEqual(2)
    expect(errors.join("\n")).toBe("")
  }, 120_000)

  it("every TypeScript block of the guides in docs/ compiles as written", async () => {
    const paths: ReadonlyArray<string> = effect3DocPages()
    expect(paths.map((path) => path.split("/").at(-1))).toEqual(
      expect.arrayContaining([
        "install.md",
        "testing.md",
        "production.md",
        "redis.md",
        "performance.md",
        "cli.md",
        "service-rules.md"
      ])
    )
    const results: ReadonlyArray<{ blocks: number; errors: ReadonlyArray<string> }> = await Promise.all(
      paths.map((path) => check(path))
    )
    expect(results.reduce((sum, { blocks }) => sum + blocks, 0)).toBeGreaterThan(15)
    expect(results.flatMap(({ errors }) => errors).join("\n")).toBe("")
  }, 180_000)

  it("the README's first screen: two commands, a first Effect and a first plain example, the emulator's variables", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const firstScreen = readme.split("\n").slice(0, 64).join("\n")
    expect(firstScreen).toContain("npm install && npm start")
    expect(firstScreen).toContain("npm test")
    expect(firstScreen).toContain('"type": "module"')
    expect(firstScreen).toMatch(/npx tsx app\.ts/)
    expect(firstScreen).toContain(
      "SERVICE_SDK_AUTH_URL=http://127.0.0.1:4000 SERVICE_SDK_API_URL=http://127.0.0.1:4000/v1"
    )
    const blocks: ReadonlyArray<{ lines: ReadonlyArray<string> }> = extractBlocks(firstScreen)
    expect(
      blocks.map((block) => block.lines.find((line) => line.includes('from "'))?.match(/from "([^"]+)"/)?.[1])
    ).toEqual(["@effect/platform-node", "@service-sdk/promise"])
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

  it("docs/testing.md's test file runs and passes (Effect and plain)", async () => {
    const [block] = extractBlocks(readFileSync(join(root, "docs", "testing.md"), "utf8"))
    const dir = join(root, "scripts", "build", "readme-run")
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "album.test.ts"), `${block.lines.join("\n")}\n`)
    const conditions = ["source", "import", "node", "default"]
    writeFileSync(
      join(dir, "vitest.config.mjs"),
      `export default ${JSON.stringify({
        resolve: { conditions },
        ssr: { resolve: { conditions, externalConditions: conditions } },
        test: { include: ["album.test.ts"] }
      })}\n`
    )
    const ran: { status: number | null; stdout: string; stderr: string } = await run(
      join(root, "node_modules", ".bin", "vitest"),
      ["run", "--config", "vitest.config.mjs"],
      { cwd: dir, env: { ...process.env, CI: "1", NO_COLOR: "1" } }
    )
    const result = { status: ran.status, output: `${ran.stdout}${ran.stderr}` }
    expect(result.output).toMatch(/Tests\s+2 passed \(2\)/)
    expect(result.status).toBe(0)
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
