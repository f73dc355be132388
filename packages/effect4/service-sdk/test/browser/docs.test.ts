/**
 * docs/browser.md's TypeScript blocks compile as written against this line's browser entry (the `browser` and
 * `source` conditions, DOM types): the complete page example included.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const packageDir = join(import.meta.dirname, "..", "..")
const guide = join(packageDir, "..", "..", "..", "docs", "browser.md")
const tsc = join(packageDir, "..", "node_modules", ".bin", "tsc")

const blocks = (markdown: string): ReadonlyArray<string> =>
  [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)

describe("docs/browser.md", () => {
  it("has the complete page example, and each block compiles as written for the browser", { timeout: 120_000 }, () => {
    const found = blocks(readFileSync(guide, "utf8"))
    expect(found.length).toBeGreaterThanOrEqual(1)
    expect(found.some((code) => code.includes("BrowserSignIn.complete") && code.includes("TokenCache.browser"))).toBe(
      true
    )
    const dir = join(packageDir, "build", "docs-check-browser")
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    for (const [index, code] of found.entries()) writeFileSync(join(dir, `block${index + 1}.ts`), code)
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          customConditions: ["browser", "source"],
          lib: ["ES2023", "DOM", "DOM.Iterable"],
          // the package's sources are compiled here (the `source` condition), and their Node-only modules need these
          types: ["node"],
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: true
        },
        include: ["*.ts"]
      })
    )
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }))
    let output = ""
    try {
      execFileSync(tsc, ["-p", dir], { encoding: "utf8", stdio: "pipe" })
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error)
    }
    expect(output).toBe("")
  })
})
