/**
 * The consumer test: what a user installs, the way the README's Install section says. `npm run pack`'s code
 * (`scripts/pack.mjs`: `tsc -b`, then `npm pack` of every non-private workspace package; the CLI's `prepack` builds
 * its bundle) packs the tarballs, and the `npm install <tarballs>` line it prints is run as printed in a fresh temp
 * project that already depends on `effect` 3.22.3, the patch before the pinned one, with the platform versions that
 * accept it (npm resolves the rest from the registry). There a program is type-checked (the repo's `tsc`, strict
 * NodeNext) and run against the installed `@service-sdk/emulator` (a bundle) through `@service-sdk/effect/testing`'s
 * `Emulator.make`, a `.cjs` file `require`s
 * `service-sdk/promise`, and `npm ls` shows one copy of `effect`. `publint` and `attw --pack --profile esm-only`
 * check each package as published.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Packed, publishablePackages } from "../pack.mjs"
import { packedByTheRun } from "./packed.js"

const root = join(import.meta.dirname, "..", "..")
const bin = (name: string) => join(root, "node_modules", ".bin", name)
// every publishable workspace package, as the pack script finds them
const published = publishablePackages()
const packages = published.map((p) => p.dir)
const EFFECT = "3.22.3"
const IOREDIS = "5.10.1"

/**
 * Runs a command without blocking this worker: a synchronous npm install or pack that takes over a minute on a
 * loaded machine would starve vitest's worker RPC ("Timeout calling onTaskUpdate").
 */
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ status: number | null; output: string; stdout: string }>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, npm_config_loglevel: "warn" }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, output: `${stdout}${stderr}`, stdout }))
  })

let dir = ""
let tarballs: Record<string, string> = {}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "service-sdk-consumer-"))
  // `npm run pack`: the run's (npm test packs both lines once for every consumer test), or into a folder of this
  // test's own
  const byTheRun = packedByTheRun()
  const packs = byTheRun?.dir ?? join(dir, "packs")
  let packed: Packed
  if (byTheRun !== undefined) packed = byTheRun.packed
  else {
    const packing = await run(process.execPath, [join(root, "scripts", "pack.mjs"), "--out", packs, "--json"], root)
    if (packing.status !== 0) throw new Error(`npm run pack failed:\n${packing.output}`)
    packed = JSON.parse(packing.stdout) as Packed
  }
  tarballs = { ...packed.tarballs }
  expect(readdirSync(packs).filter((file) => file.endsWith(".tgz")).length).toBe(packages.length)

  // the user's app, already on Effect 3.22.x; then the README's line, as the pack script printed it
  const app = join(dir, "app")
  mkdirSync(app)
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({
      name: "consumer-app",
      private: true,
      type: "module",
      dependencies: {
        effect: EFFECT,
        "@effect/platform": "0.97.2",
        "@effect/platform-node": "0.108.2",
        // another 5.x than the workspace's (5.9.2): the user's copy is the one @service-sdk/redis uses (a peer)
        ioredis: IOREDIS
      },
      // the app tests its code as docs/testing.md shows (vitest 3, @effect/vitest 0.x)
      devDependencies: { vitest: "3.2.7", "@effect/vitest": "0.30.0" }
    })
  )
  const [npm, install, ...files] = packed.install.split(" ")
  expect([npm, install]).toEqual(["npm", "install"])
  expect(files.length).toBe(packages.length)
  const installed = await run("npm", ["install", "--no-audit", "--no-fund", ...files], app)
  if (installed.status !== 0) throw new Error(`${packed.install} failed:\n${installed.output}`)
}, 600_000) // npm pack and install: minutes on a loaded machine

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("consumer: the packed packages in a fresh project", () => {
  it("runs docs/testing.md's Effect 3 test files in this fresh app (issue 38 item 4), as a user pastes them", async () => {
    type Block = { readonly lines: ReadonlyArray<string> }
    const { extractBlocks, lineOf } = (await import(join(root, "scripts", "readme-check.mjs"))) as {
      readonly extractBlocks: (markdown: string) => ReadonlyArray<Block>
      readonly lineOf: (block: Block) => "effect3" | "effect4"
    }
    const files = extractBlocks(readFileSync(join(root, "docs", "testing.md"), "utf8"))
      .filter((block) => lineOf(block) === "effect3")
      .filter((block) => block.lines.some((line) => line.includes('from "@effect/vitest"')))
      .map((block, index) => [`guide${index + 1}.test.ts`, `${block.lines.join("\n")}\n`] as const)
    expect(files.length).toBeGreaterThanOrEqual(2)
    const app = join(dir, "app")
    mkdirSync(join(app, "test"), { recursive: true })
    for (const [name, text] of files) writeFileSync(join(app, "test", name), text)
    const declared = files.reduce((sum, [, text]) => sum + [...text.matchAll(/^\s*it(\.effect|\.live)?\(/gm)].length, 0)
    const tested = await run(process.execPath, [join(app, "node_modules", "vitest", "vitest.mjs"), "run", "guide"], app)
    expect(tested.status, tested.output).toBe(0)
    const plain = tested.output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "")
    expect(plain).toMatch(new RegExp(`Tests\\s+${declared} passed \\(${declared}\\)`))
  }, 120_000)

  it("tarballs carry dist, .d.ts, README and LICENSE", () => {
    for (const [name, file] of Object.entries(tarballs)) {
      const list = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n")
      for (const expected of [
        "package/README.md",
        "package/LICENSE",
        "package/dist/index.js",
        "package/dist/index.d.ts"
      ]) {
        expect(list, `${name}: ${expected}`).toContain(expected)
      }
    }
  })

  it("tarballs declare Effect and the platform packages as peers, with the metadata a registry shows", () => {
    for (const [name, file] of Object.entries(tarballs)) {
      const manifest = JSON.parse(execFileSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8" }))
      for (const peer of ["effect", "@effect/platform", "@effect/platform-node"]) {
        expect(manifest.dependencies?.[peer], `${name}: ${peer} is not a dependency`).toBeUndefined()
      }
      // a package whose published JS imports effect has it as a peer; a bundle (no import of it) has no peers
      const js = execFileSync("tar", ["-xzOf", file, "--wildcards", "package/dist/*.js"], {
        encoding: "utf8",
        maxBuffer: 256 * 1024 * 1024
      })
      if (/\bfrom\s*"effect(\/[^"]*)?"/.test(js)) {
        expect(manifest.peerDependencies?.effect, name).toMatch(/^\^3\.22\.\d+$/)
      } else {
        expect(manifest.peerDependencies ?? {}, `${name} bundles what it imports`).toEqual({})
      }
      expect(manifest.license, name).toBe("MIT")
      expect(manifest.engines, name).toEqual({ node: ">=20" })
      expect(manifest.repository?.url, name).toMatch(/^git\+https:/)
      expect(manifest.sideEffects, name).toBeDefined()
      expect(
        (manifest.files as ReadonlyArray<string>).some((entry) => entry === "dist" || entry.startsWith("dist/")),
        `${name}: files ships dist`
      ).toBe(true)
    }
  })

  it("has one copy of ioredis, the user's (a peer of @service-sdk/redis)", async () => {
    const app = join(dir, "app")
    const ls = await run("npm", ["ls", "ioredis", "--all", "--parseable"], app)
    expect(ls.status, ls.output).toBe(0)
    const paths = new Set(ls.output.split("\n").filter((line) => line.endsWith("/node_modules/ioredis")))
    expect([...paths]).toEqual([join(app, "node_modules", "ioredis")])
    const version = execFileSync("node", ["-p", 'require("ioredis/package.json").version'], {
      cwd: app,
      encoding: "utf8"
    })
    expect(version.trim()).toBe(IOREDIS)
    const manifest = JSON.parse(
      execFileSync("tar", ["-xzOf", tarballs["@service-sdk/redis"]!, "package/package.json"], { encoding: "utf8" })
    )
    expect(manifest.peerDependencies.ioredis).toBe("^5")
    expect(manifest.dependencies?.ioredis).toBeUndefined()
  })

  it("has one copy of effect, the user's", async () => {
    const app = join(dir, "app")
    const ls = await run("npm", ["ls", "effect", "--all", "--parseable"], app)
    expect(ls.status, ls.output).toBe(0)
    const paths = new Set(ls.output.split("\n").filter((line) => line.endsWith("/node_modules/effect")))
    expect([...paths]).toEqual([join(app, "node_modules", "effect")])
    const version = execFileSync("node", ["-p", 'require("effect/package.json").version'], {
      cwd: app,
      encoding: "utf8"
    })
    expect(version.trim()).toBe(EFFECT)
  })

  it("type-checks and runs an Effect program against the installed emulator", async () => {
    const app = join(dir, "app")
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "ESNext.Disposable"],
          types: ["node"],
          typeRoots: [join(root, "node_modules", "@types")],
          strict: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: true,
          outDir: "out"
        },
        include: ["main.ts"]
      })
    )
    writeFileSync(
      join(app, "main.ts"),
      [
        'import { NodeHttpClient } from "@effect/platform-node"',
        'import { Emulator } from "@service-sdk/effect/testing"',
        'import { RedisTokenCache } from "@service-sdk/redis"',
        'import { Effect, Layer } from "effect"',
        'import { Redis } from "ioredis"',
        'import { ClientCredentials, ServiceClient, TokenCache } from "@service-sdk/effect"',
        "",
        "// a user-made ioredis client type-checks as the cache's client (not connected here: lazyConnect)",
        "const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false })",
        'const redisCache = RedisTokenCache.make({ client: redis, key: "service-sdk:token:consumer" })',
        "",
        "const program = Effect.gen(function* () {",
        "  const emulator = yield* Emulator.make()",
        "  const tokenCache = yield* TokenCache.memory()",
        "  const layer = ServiceClient.layer({ apiUrl: emulator.apiUrl }).pipe(",
        "    Layer.provide(",
        "      ClientCredentials.layer({",
        "        clientId: emulator.clientId,",
        "        clientSecret: emulator.clientSecret,",
        "        authUrl: emulator.authUrl,",
        "        tokenCache",
        "      })",
        "    )",
        "  )",
        '  const album = yield* Effect.flatMap(ServiceClient, (client) => client.albums.get("6akEvsycLGftJxYudPjmqK")).pipe(',
        "    Effect.provide(layer)",
        "  )",
        "  const stats = yield* emulator.stats",
        "  return { album: album.name, tokenRequests: stats.tokenRequests.total, redis: typeof RedisTokenCache.make, redisCache: Effect.isEffect(redisCache) }",
        "}).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))",
        "",
        "console.log(JSON.stringify(await Effect.runPromise(program)))",
        ""
      ].join("\n")
    )
    const tsc = await run(bin("tsc"), ["-p", "tsconfig.json", "--pretty", "false"], app)
    expect(tsc.output).toBe("")
    expect(tsc.status).toBe(0)
    const result = await run("node", ["out/main.js"], app)
    expect(result.status, result.output).toBe(0)
    const printed = JSON.parse(result.output.trim().split("\n").at(-1)!)
    expect(printed.tokenRequests).toBe(1)
    expect(printed.redis).toBe("function")
    expect(printed.redisCache).toBe(true)
    expect(typeof printed.album).toBe("string")
    expect(printed.album.length).toBeGreaterThan(0)
  })

  it('require("@service-sdk/effect/promise") works from a .cjs file', async () => {
    const app = join(dir, "app")
    writeFileSync(
      join(app, "promise.cjs"),
      [
        'const { AsyncServiceClient, ServiceError } = require("@service-sdk/effect/promise")',
        'const { Emulator } = require("@service-sdk/emulator")',
        "const main = async () => {",
        "  const emulator = await Emulator.start()",
        "  const client = new AsyncServiceClient({",
        "    clientId: emulator.clientId,",
        "    clientSecret: emulator.clientSecret,",
        "    authUrl: emulator.authUrl,",
        "    apiUrl: emulator.apiUrl",
        "  })",
        "  try {",
        '    const album = await client.albums.get("6akEvsycLGftJxYudPjmqK")',
        "    const error = await client.users.me().then(() => undefined, (e) => e)",
        "    console.log(JSON.stringify({ album: album.name, errorIsServiceError: error instanceof ServiceError }))",
        "  } finally {",
        "    await client.close()",
        "    await emulator.close()",
        "  }",
        "}",
        "main().catch((error) => {",
        "  console.error(error)",
        "  process.exit(1)",
        "})",
        ""
      ].join("\n")
    )
    const result = await run("node", ["promise.cjs"], app)
    expect(result.status, result.output).toBe(0)
    const printed = JSON.parse(result.output.trim().split("\n").at(-1)!)
    expect(printed.album.length).toBeGreaterThan(0)
    expect(printed.errorIsServiceError).toBe(true)
  })

  it("the installed CLI runs (its bin is the packed bundle)", async () => {
    const result = await run(join(dir, "app", "node_modules", ".bin", "service-sdk"), ["--help"], join(dir, "app"))
    expect(result.status, result.output).toBe(0)
    expect(result.output).toContain("demo")
  })

  // independent of each other: side by side
  it.concurrent.each(packages)("publint and attw --profile esm-only are clean for %s", async (packagePath) => {
    const packageDir = join(root, packagePath)
    const name = published.find((p) => p.dir === packagePath)!.name
    const publint = await run(bin("publint"), ["run", packageDir, "--strict"], root)
    expect(publint.status, publint.output).toBe(0)
    expect(publint.output).not.toMatch(/warning|error|suggestion/i)
    const file = tarballs[name]!
    const attw = await run(bin("attw"), [file, "--profile", "esm-only", "--format", "ascii"], root)
    expect(attw.status, attw.output).toBe(0)
  })
})
