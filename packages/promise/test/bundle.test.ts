/**
 * The built bundle as a user meets it: real class names (not esbuild's minified ones) and an unhandled rejection
 * that prints a few short lines, not the bundle's source. Builds `dist/` first (`scripts/build.mjs`, after `tsc -b`).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { beforeAll } from "vitest"

const root = join(import.meta.dirname, "..")

const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env })
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

// an app that forgets a catch: the rejection ends the process and Node prints it
const unhandled = (kind: "callback" | "config") => `
const { AsyncAuthorizationCode, AsyncServiceClient } = await import(${JSON.stringify(join(root, "dist", "index.js"))})
await Promise.resolve()
${kind === "config" ? "new AsyncServiceClient({})" : 'AsyncAuthorizationCode.parseResponseUrl("?error=access_denied")'}
`

describe("the built bundle", () => {
  beforeAll(async () => {
    const build = await run([join(root, "scripts", "build.mjs")])
    expect(build.stderr).toBe("")
    expect(build.status).toBe(0)
  }, 120_000)

  it("keeps the error classes' names: name, constructor.name, the stack's first line", () => {
    const bundle = createRequire(import.meta.url)(join(root, "dist", "index.cjs"))
    for (const name of [
      "AuthenticationError",
      "ConfigurationError",
      "TransportError",
      "ApiError",
      "RateLimitError",
      "TokenCacheError"
    ]) {
      const error = new bundle[name]({ message: "m", status: 500 })
      expect(error.name).toBe(name)
      expect(error.constructor.name).toBe(name)
      expect(String(error.stack).split("\n")[0]).toBe(`${name}: m`)
      expect(error).toBeInstanceOf(bundle.ServiceError)
    }
    // every public class names itself (with or without esbuild's keepNames)
    expect(bundle.ServiceError.name).toBe("ServiceError")
    for (const name of [
      "AsyncServiceClient",
      "AsyncClientCredentials",
      "AsyncAuthorizationCode",
      "AsyncUserTokens",
      "AsyncTokenProvider",
      "AsyncUserTokenProvider"
    ]) {
      expect(bundle[name].name).toBe(name)
    }
  })

  it("an unhandled rejection prints a few short lines naming the class", async () => {
    const env = { ...process.env, SERVICE_SDK_CLIENT_ID: "", SERVICE_SDK_CLIENT_SECRET: "" }
    for (const [kind, header] of [
      ["callback", "AuthenticationError: authorization failed: access_denied"],
      ["config", "ConfigurationError: no credentials"]
    ] as const) {
      const { status, stderr } = await run(["--input-type=module", "-e", unhandled(kind)], env)
      expect(status).toBe(1)
      expect(stderr).toContain(header)
      // the source line Node quotes, the stack (10 frames), the fields: about 1.2 KB (the minified bundle: 112 KB)
      expect(stderr.length).toBeLessThan(4_000)
      expect(Math.max(...stderr.split("\n").map((line) => line.length))).toBeLessThan(400)
    }
  }, 60_000)

  it("a rejection's stack shows the caller's own frame; source-mapped frames name files that exist (42.15)", async () => {
    const script = [
      `const { AsyncClientCredentials } = require(${JSON.stringify(join(root, "dist", "index.cjs"))})`,
      'const auth = new AsyncClientCredentials({ clientId: "id", clientSecret: "s", authUrl: "http://127.0.0.1:9", maxRetries: 0 })',
      "async function myOwnCallSite() { return auth.getAccessToken() }",
      "myOwnCallSite().catch((error) => { console.error(error.stack); return auth.close() })"
    ].join("\n")
    for (const args of [[], ["--enable-source-maps"]]) {
      const { stderr } = await run([...args, "-e", script])
      expect(stderr).toMatch(/^TransportError: /)
      expect(stderr).toContain("myOwnCallSite")
      if (args.length === 0) continue
      // every frame Node maps into the SDK's sources names a file that exists (shipped under dist/sources)
      const mapped = [...stderr.matchAll(/\((\/[^():]+\.ts):\d+:\d+\)/g)].map((match) => match[1]!)
      expect(mapped.length).toBeGreaterThan(0)
      expect(mapped.filter((file) => !existsSync(file))).toEqual([])
      expect(mapped.every((file) => file.startsWith(join(root, "dist", "sources")))).toBe(true)
    }
  }, 60_000)

  it("stays within 2 MB unpacked", () => {
    const dist = join(root, "dist")
    const files = [
      "index.js",
      "index.cjs",
      "index.cjs.map",
      "index.d.ts",
      "index.d.cts",
      "browser.js",
      "browser.js.map"
    ]
    expect(readdirSync(dist)).toEqual(expect.arrayContaining(files))
    const bytes = files.reduce((sum, file) => sum + statSync(join(dist, file)).size, 0)
    expect(bytes).toBeLessThan(2 * 1024 * 1024)
  })
})
