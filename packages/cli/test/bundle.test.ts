/**
 * The shipped bin is the bundle (`scripts/bundle.mjs`): the shim imports it, and `--help` loads only the command
 * line (the handlers are a chunk of their own, imported when a command runs).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")
const cli = join(root, "packages", "cli")

describe("the CLI bundle", () => {
  it("the bin runs the bundle, whose handlers load only when a command runs", { timeout: 120_000 }, () => {
    execFileSync(process.execPath, [join(cli, "scripts", "bundle.mjs")], { stdio: "inherit" })
    expect(readFileSync(join(cli, "bin", "service-sdk.js"), "utf8")).toMatch(/^import "\.\.\/bundle\/bin\.js"$/m)
    const entry = readFileSync(join(cli, "bundle", "bin.js"), "utf8")
    const staticImports = [...entry.matchAll(/from\s*"([^"]+)"/g)].map((match) => match[1]!)
    const dynamicImports = [...entry.matchAll(/import\("([^"]+)"\)/g)].map((match) => match[1]!)
    expect(dynamicImports.some((path) => path.includes("handlers"))).toBe(true)
    expect(staticImports.some((path) => path.includes("handlers"))).toBe(false)
    // no module of the workspace or node_modules is loaded from outside the bundle
    expect(staticImports.filter((path) => !path.startsWith("./") && !path.startsWith("node:"))).toEqual([])
    const chunks = readdirSync(join(cli, "bundle", "chunks"))
    expect(chunks.some((name) => name.startsWith("handlers-"))).toBe(true)

    const help = execFileSync(process.execPath, [join(cli, "bin", "service-sdk.js"), "--help"], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" }
    })
    expect(help).toContain("service-sdk")
    expect(help).toContain("whoami")
  })
})
