/**
 * The consumer test of `@service-sdk/promise`: what a plain-code user installs. The package is packed once
 * (`npm pack`; its `prepack` bundles it), then installed from the tarball (`--prefer-offline`) into fresh temp
 * projects:
 * - one with nothing else: `node_modules` holds that one package; the README's runnable examples (```js blocks
 *   starting `// run: esm` or `// run: cjs`) run there, `import` and `require`, against the emulator; its
 *   declarations compile with the documented `lib: ["ES2022"]`; a rejection's stack shows the app's own call and
 *   its source-mapped frames name files of the package;
 * - one that also has `effect@4` (npm's `latest` major): the same examples run, and an Effect 4 program beside them;
 * - one with `ioredis@5` (the app's own): `RedisTokenCache.connect` from the package, with a user-made client and with
 *   a `url`, against a real `redis-server` on a free loopback port: the second process is served from Redis.
 * The emulator runs in this test's process (from the workspace): installing its tarball into the project would bring
 * Effect 3 and its platform packages with it, which is exactly what these projects must do without.
 */
import { Emulator } from "@service-sdk/emulator"
import { execFile, spawn } from "node:child_process"

import { createServer } from "node:net"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { promisify } from "node:util"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { packedByTheRun } from "./packed.js"

const root = join(import.meta.dirname, "..", "..")
const EFFECT_4 = "4"

interface Example {
  readonly kind: "esm" | "cjs"
  readonly code: string
}

/** The README's runnable examples. */
const examples = (): ReadonlyArray<Example> =>
  [...readFileSync(join(root, "packages", "promise", "README.md"), "utf8").matchAll(/```js\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .filter((code) => /^\/\/ run: (esm|cjs)\n/.test(code))
    .map((code) => ({ kind: code.startsWith("// run: esm") ? "esm" : "cjs", code }))

const execFileAsync = promisify(execFile)

/** npm, asynchronously (a long synchronous call would block the test worker). */
const npm = async (args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  (
    await execFileAsync("npm", [...args], {
      cwd,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_loglevel: "error", npm_config_fund: "false", npm_config_audit: "false" }
    })
  ).stdout

/** Runs `node file` in `cwd` with the emulator's settings; resolves to its exit code and output. */
const node = (file: string, cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

let dir = ""
let tarball = ""
let emulator: Awaited<ReturnType<typeof Emulator.start>>
let env: Record<string, string> = {}

const project = async (name: string, install: ReadonlyArray<string>) => {
  const cwd = join(dir, name)
  mkdirSync(cwd)
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name, private: true, type: "module" }))
  await npm(["install", "--prefer-offline", "--no-package-lock", ...install], cwd)
  return cwd
}

const runExamples = async (cwd: string) => {
  const all = examples()
  expect(all.map((example) => example.kind).sort()).toEqual(["cjs", "esm", "esm", "esm"])
  for (const [index, example] of all.entries()) {
    const file = `example-${index}.${example.kind === "esm" ? "mjs" : "cjs"}`
    writeFileSync(join(cwd, file), example.code)
    const result = await node(file, cwd, env)
    expect({ file, code: result.code, stderr: result.stderr }).toEqual({ file, code: 0, stderr: "" })
    expect(result.stdout.trim()).not.toBe("")
    expect(result.stdout).not.toContain(env.SERVICE_SDK_CLIENT_SECRET!)
  }
  // README 1 kept the app token in a 0600 file
  expect(readFileSync(join(cwd, "tokens.json"), "utf8")).toContain("access_token")
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "service-sdk-promise-consumer-"))
  // the tarball `npm test` packed once for every consumer test, or one packed here
  const byTheRun = packedByTheRun()?.packed.tarballs["@service-sdk/promise"]
  if (byTheRun !== undefined) tarball = byTheRun
  else {
    const packs = join(dir, "packs")
    mkdirSync(packs)
    const [packed] = JSON.parse(
      await npm(["pack", "--json", "--pack-destination", packs], join(root, "packages", "promise"))
    )
    tarball = join(packs, packed.filename.replace(/^@/, "").replace("/", "-"))
  }
  emulator = await Emulator.start({})
  env = {
    SERVICE_SDK_CLIENT_ID: emulator.clientId,
    SERVICE_SDK_CLIENT_SECRET: emulator.clientSecret,
    SERVICE_SDK_AUTH_URL: emulator.authUrl,
    SERVICE_SDK_API_URL: emulator.apiUrl
  }
})

afterAll(async () => {
  await emulator?.close()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("@service-sdk/promise installed from its tarball", () => {
  it("alone: one package installed, the README's examples run (ESM and CommonJS) against the emulator", async () => {
    const cwd = await project("alone", [tarball])
    expect(readdirSync(join(cwd, "node_modules")).filter((name) => !name.startsWith("."))).toEqual(["@service-sdk"])
    expect(readdirSync(join(cwd, "node_modules", "@service-sdk"))).toEqual(["promise"])
    await runExamples(cwd)
    // import and require load one copy: the same classes
    writeFileSync(
      join(cwd, "same.mjs"),
      [
        'import { createRequire } from "node:module"',
        'import * as esm from "@service-sdk/promise"',
        'const cjs = createRequire(import.meta.url)("@service-sdk/promise")',
        "console.log(esm.ConfigurationError === cjs.ConfigurationError && esm.AsyncServiceClient === cjs.AsyncServiceClient)"
      ].join("\n")
    )
    expect((await node("same.mjs", cwd, env)).stdout.trim()).toBe("true")
  })

  it("its types compile in a strict TypeScript project without Effect; attw and publint --strict are clean", async () => {
    const cwd = join(dir, "alone")
    writeFileSync(
      join(cwd, "app.ts"),
      [
        "import {",
        "  AsyncClientCredentials,",
        "  ConfigurationError,",
        "  fileTokenCache,",
        "  type PromiseTokenCache,",
        "  ServiceError,",
        "  type TokenInfoJson,",
        "  tokenInfoToJson",
        '} from "@service-sdk/promise"',
        "const rows = new Map<string, TokenInfoJson>()",
        "const mine: PromiseTokenCache = {",
        '  get: async () => rows.get("app"),',
        '  set: async (token) => void rows.set("app", tokenInfoToJson(token))',
        "}",
        'export const a = new AsyncClientCredentials({ tokenCache: mine, skew: "10 seconds", logLevel: "error" })',
        'export const b = new AsyncClientCredentials({ tokenCache: fileTokenCache("t.json") })',
        "export const token: Promise<string> = a.getAccessToken()",
        "export const isConfig = (e: unknown): boolean => e instanceof ConfigurationError && e instanceof ServiceError",
        "// @ts-expect-error: logLevel is one of five names",
        'export const c = new AsyncClientCredentials({ logLevel: "loud" })'
      ].join("\n")
    )
    writeFileSync(
      join(cwd, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2022", "ESNext.Disposable"],
          types: [],
          skipLibCheck: false,
          noEmit: true
        },
        files: ["app.ts"]
      })
    )
    const bin = (name: string) => join(root, "node_modules", ".bin", name)
    await execFileAsync(bin("tsc"), ["-p", cwd], { cwd, encoding: "utf8" })
    expect((await execFileAsync(bin("attw"), [tarball], { cwd, encoding: "utf8" })).stdout).toContain(
      "No problems found"
    )
    const publint = await execFileAsync(bin("publint"), ["--strict", tarball], { cwd, encoding: "utf8" })
    expect(publint.stdout + publint.stderr).toContain("All good")
  })

  it("its declarations compile with the documented lib ES2022 alone, in a project with only this package (42.15)", async () => {
    const cwd = join(dir, "alone")
    writeFileSync(
      join(cwd, "es2022.ts"),
      [
        'import { AsyncServiceClient, AsyncUserTokens, RedisTokenCache, type TokenInfo } from "@service-sdk/promise"',
        'export const client = new AsyncServiceClient({ accessToken: "t" })',
        "export const closed: Promise<void> = client[Symbol.asyncDispose]()",
        "export const users = (store: Map<string, TokenInfo>) =>",
        "  new AsyncUserTokens({ store: (id) => ({ get: async () => store.get(id), set: async (t: TokenInfo) => void store.set(id, t) }) })",
        'export const redis = RedisTokenCache.connect({ url: "redis://127.0.0.1:6379", key: "k", logLevel: "none" })'
      ].join("\n")
    )
    writeFileSync(
      join(cwd, "tsconfig.es2022.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2022"],
          types: [],
          skipLibCheck: false,
          noEmit: true
        },
        files: ["es2022.ts"]
      })
    )
    const tsc = join(root, "node_modules", ".bin", "tsc")
    const result = await execFileAsync(tsc, ["-p", join(cwd, "tsconfig.es2022.json")], { cwd, encoding: "utf8" }).then(
      () => "",
      (error: { stdout?: string }) => String(error.stdout)
    )
    expect(result).toBe("")
  })

  it("a rejection's stack shows the app's own call; source-mapped frames name files in the package (42.15)", async () => {
    const cwd = join(dir, "alone")
    writeFileSync(
      join(cwd, "stack.cjs"),
      [
        'const { AsyncClientCredentials } = require("@service-sdk/promise")',
        'const auth = new AsyncClientCredentials({ clientSecret: "not-the-secret" })',
        "async function myOwnCallSite() { return auth.getAccessToken() }",
        "myOwnCallSite().catch((error) => { console.log(error.stack); return auth.close() })"
      ].join("\n")
    )
    for (const flags of [[], ["--enable-source-maps"]]) {
      const result = await new Promise<{ stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [...flags, "stack.cjs"], { cwd, env: { ...process.env, ...env } })
        let stdout = ""
        child.stdout.on("data", (chunk) => (stdout += chunk))
        child.on("close", () => resolve({ stdout }))
      })
      expect(result.stdout).toMatch(/^AuthenticationError: /)
      expect(result.stdout).toMatch(/myOwnCallSite \(.*stack\.cjs:3:/)
      const mapped = [...result.stdout.matchAll(/\((\/[^():]+\.ts):\d+:\d+\)/g)].map((match) => match[1]!)
      if (flags.length > 0) expect(mapped.length).toBeGreaterThan(0)
      expect(mapped.filter((file) => !existsSync(file))).toEqual([])
    }
  })

  it("beside effect@4: both work, side by side", async () => {
    const cwd = await project("effect4", [tarball, `effect@${EFFECT_4}`])
    const effect = JSON.parse(readFileSync(join(cwd, "node_modules", "effect", "package.json"), "utf8"))
    expect(effect.version).toMatch(/^4\./)
    await runExamples(cwd)
    writeFileSync(
      join(cwd, "both.mjs"),
      [
        'import { Effect } from "effect"',
        'import { AsyncClientCredentials } from "@service-sdk/promise"',
        "const auth = new AsyncClientCredentials()",
        "try {",
        "  const token = await Effect.runPromise(Effect.promise(() => auth.getAccessToken()))",
        '  console.log(typeof token === "string" && token.length > 0)',
        "} finally {",
        "  await auth.close()",
        "}"
      ].join("\n")
    )
    const result = await node("both.mjs", cwd, env)
    expect({ code: result.code, stdout: result.stdout.trim(), stderr: result.stderr }).toEqual({
      code: 0,
      stdout: "true",
      stderr: ""
    })
  })
})

const REDIS_SERVER = "/usr/bin/redis-server"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

const startRedis = async () => {
  const port = await freePort()
  const child = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
  await new Promise<void>((resolve, reject) => {
    let output = ""
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (output.includes("Ready to accept connections")) resolve()
    })
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)))
  })
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") }
}

describe.skipIf(!existsSync(REDIS_SERVER))("@service-sdk/promise with the app's ioredis", () => {
  it("RedisTokenCache.connect (a user-made client, then a url): one token request for two processes", async () => {
    const redis = await startRedis()
    try {
      const cwd = await project("redis", [tarball, "ioredis@5"])
      expect(readdirSync(join(cwd, "node_modules")).filter((name) => name === "effect")).toEqual([])
      writeFileSync(
        join(cwd, "client.mjs"),
        [
          'import { Redis } from "ioredis"',
          'import { AsyncClientCredentials, RedisTokenCache } from "@service-sdk/promise"',
          "const client = new Redis(process.env.REDIS_URL)",
          'const tokenCache = await RedisTokenCache.connect({ client, key: "consumer:token" })',
          "const auth = new AsyncClientCredentials({ tokenCache })",
          "try {",
          "  console.log((await auth.getAccessToken()).length > 0)",
          "} finally {",
          "  await auth.close()",
          "  await tokenCache.close()",
          "  client.disconnect()",
          "}"
        ].join("\n")
      )
      writeFileSync(
        join(cwd, "url.cjs"),
        [
          'const { AsyncClientCredentials, RedisTokenCache, TokenCacheError } = require("@service-sdk/promise")',
          "async function main() {",
          '  const tokenCache = await RedisTokenCache.connect({ url: process.env.REDIS_URL, key: "consumer:token" })',
          "  const auth = new AsyncClientCredentials({ tokenCache })",
          "  try {",
          "    console.log((await auth.getAccessToken()).length > 0)",
          "  } finally {",
          "    await auth.close()",
          "    await tokenCache.close()",
          "  }",
          '  const down = await RedisTokenCache.connect({ url: "redis://127.0.0.1:1", key: "k" }).catch((e) => e)',
          "  console.log(down instanceof TokenCacheError)",
          "}",
          "main().catch((error) => { console.error(error); process.exitCode = 1 })"
        ].join("\n")
      )
      const before = (await emulator.stats()).tokenRequests.client_credentials
      const first = await node("client.mjs", cwd, { ...env, REDIS_URL: redis.url })
      expect({ code: first.code, stdout: first.stdout.trim(), stderr: first.stderr }).toEqual({
        code: 0,
        stdout: "true",
        stderr: ""
      })
      const second = await node("url.cjs", cwd, { ...env, REDIS_URL: redis.url })
      expect({ code: second.code, stdout: second.stdout.trim(), stderr: second.stderr }).toEqual({
        code: 0,
        stdout: "true\ntrue",
        stderr: ""
      })
      expect((await emulator.stats()).tokenRequests.client_credentials - before).toBe(1)
    } finally {
      redis.stop()
    }
  })
})
