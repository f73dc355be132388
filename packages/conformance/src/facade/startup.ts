/**
 * What the start-up tests of both lines share: the modules a fresh Node process loads for a piece of code. The tests
 * themselves are each line's own (`test/facade/startup.test.ts`): the lines' default HTTP clients differ (undici,
 * loaded on first use, on the Effect 3 line; `fetch` on the Effect 4 line, which loads its loopback sign-in on use).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Module hooks that append every resolved URL to the file in `RECORD_LOADS`. */
const hooks = `data:text/javascript;base64,${Buffer.from(
  [
    `import { appendFileSync } from "node:fs"`,
    `export const resolve = async (specifier, context, next) => {`,
    `  const resolved = await next(specifier, context)`,
    `  appendFileSync(process.env.RECORD_LOADS, resolved.url + "\\n")`,
    `  return resolved`,
    `}`
  ].join("\n")
).toString("base64")}`
const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)})`

/**
 * The URLs a Node process (this one's executable) running the module `code` in `cwd` resolved: with `cwd` a line's
 * package folder, `@service-sdk/effect/promise` is that line as built, as a user imports it.
 */
export const loadedUrls = (code: string, cwd: string): ReadonlyArray<string> => {
  const dir = mkdtempSync(join(tmpdir(), "startup-"))
  try {
    const record = join(dir, "loads.txt")
    execFileSync(process.execPath, ["--import", register, "--input-type=module", "-e", code], {
      cwd,
      env: { ...process.env, RECORD_LOADS: record },
      stdio: ["ignore", "ignore", "inherit"]
    })
    return readFileSync(record, "utf8").trim().split("\n")
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
