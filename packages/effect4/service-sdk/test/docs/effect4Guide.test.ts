/** docs/effect4.md's TypeScript blocks compile as written, against this line's sources (strict, NodeNext). */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const packageDir = join(import.meta.dirname, "..", "..")
const guide = join(packageDir, "..", "..", "..", "docs", "effect4.md")
const tsc = join(packageDir, "..", "node_modules", ".bin", "tsc")

export const blocks = (markdown: string): ReadonlyArray<string> =>
  [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)

describe("docs/effect4.md", () => {
  it("has the Effect 4 examples, and each compiles as written", { timeout: 60_000 }, () => {
    const found = blocks(readFileSync(guide, "utf8"))
    expect(found.length).toBeGreaterThanOrEqual(3)
    // inside the package, so that effect 4, @effect/vitest 4 and service-sdk (its sources) resolve as for a user
    const dir = join(packageDir, "build", "docs-check")
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
          customConditions: ["source"],
          lib: ["ES2023", "DOM"],
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
