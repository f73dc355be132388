/**
 * The Effect 4 line's consumer test: what a user of a fresh Effect 4.1 app installs. `npm run pack`'s code packs both
 * lines; in a fresh project that depends on `effect@4.1.0`, the Effect 4 line's install line is run as printed (by
 * npm on the supported Node this project installs), with the packed emulator and CLI (bundles with no peer: issue 38
 * item 3) beside it, with no warning; `npm ls` shows one copy of `effect`; the client-credentials example of
 * docs/effect4.md is type-checked and run against the emulator, its testing example runs under `@effect/vitest` 4
 * with the mock `HttpClient`, docs/testing.md's Effect 4 test files run there as a user pastes them, the app's own code is tested there against the installed emulator (`Emulator.start()`
 * and `@service-sdk/effect/testing`'s `Emulator.layer()`), and the installed CLI's bin runs a command.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningEmulator, startEmulator } from "../service-sdk/test/support/emulator.js"

const root = join(import.meta.dirname, "..", "..", "..")
/** What `scripts/pack.mjs --json` prints (and writes to its folder's packages.json): the Effect 4 line's part. */
type Packed = {
  readonly tarballs: Record<string, string>
  readonly effect4: { readonly install: string; readonly tarballs: Record<string, string> }
}
const effect4 = join(root, "packages", "effect4")
const node = process.execPath
/** The machine's npm, run by this Node (so npm judges `engines` against the Node the app runs on). */
const npmCli = (() => {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    try {
      const real = realpathSync(join(dir, "npm"))
      if (real.endsWith("npm-cli.js")) return real
    } catch {}
  }
  throw new Error("npm not found on PATH")
})()

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, output: `${stdout}${stderr}` }))
  })
const npm = (args: ReadonlyArray<string>, cwd: string) =>
  run(node, [npmCli, ...args], cwd, { npm_config_loglevel: "warn" })

const docBlocks = () =>
  [...readFileSync(join(root, "docs", "effect4.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)

let app = ""
let installOutput = ""
let tarballs: Record<string, string> = {}
/** The emulator's and the CLI's tarballs: bundles, one for both lines. */
let bundles: Record<string, string> = {}
let emulator: RunningEmulator

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-effect4-consumer-"))
  // `npm run pack`: the run's (npm test packs both lines once for every consumer test and names its packages.json in
  // SERVICE_SDK_PACKED, as scripts/test/packed.ts reads it), or one of this test's own
  let packed: Packed
  const byTheRun = process.env.SERVICE_SDK_PACKED
  if (byTheRun !== undefined && byTheRun !== "") packed = JSON.parse(readFileSync(byTheRun, "utf8")) as Packed
  else {
    const packing = await run(node, [join(root, "scripts", "pack.mjs"), "--out", join(dir, "packs"), "--json"], root)
    if (packing.status !== 0) throw new Error(`npm run pack failed:\n${packing.output}`)
    packed = JSON.parse(packing.stdout) as Packed
  }
  expect(Object.keys(packed.effect4.tarballs)).toEqual(["@service-sdk/effect", "@service-sdk/redis"])
  tarballs = packed.effect4.tarballs
  bundles = {
    "@service-sdk/emulator": packed.tarballs["@service-sdk/emulator"]!,
    "@service-sdk/cli": packed.tarballs["@service-sdk/cli"]!
  }

  app = join(dir, "app")
  mkdirSync(join(app, "test"), { recursive: true })
  // a fresh Effect 4.1 app, with @effect/vitest 4 for its tests
  const pinned = JSON.parse(readFileSync(join(effect4, "package.json"), "utf8")).devDependencies
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({
      name: "effect4-consumer-app",
      private: true,
      type: "module",
      dependencies: { effect: pinned.effect },
      devDependencies: { "@effect/vitest": pinned["@effect/vitest"], vitest: pinned.vitest }
    })
  )
  const base = await npm(["install", "--no-audit", "--no-fund"], app)
  if (base.status !== 0) throw new Error(`npm install failed:\n${base.output}`)
  const [, , ...files] = packed.effect4.install.split(" ")
  const install = await npm(["install", "--no-audit", "--no-fund", ...files, ...Object.values(bundles)], app)
  installOutput = install.output
  if (install.status !== 0) throw new Error(`installing the tarballs failed:\n${install.output}`)
  emulator = await startEmulator()
}, 600_000)

afterAll(async () => {
  await emulator?.stop()
})

describe("a fresh Effect 4.1 app installs the Effect 4 line", () => {
  it("installs the tarballs, the emulator and the CLI with no warning, and keeps one copy of effect (4.1.0)", async () => {
    expect(installOutput).not.toMatch(/warn|ERESOLVE|peer/i)
    const ls = await npm(["ls", "effect", "--all", "--json"], app)
    const versions = new Set<string>()
    const walk = (deps: Record<string, { version?: string; dependencies?: Record<string, unknown> }> = {}) => {
      for (const [name, dep] of Object.entries(deps)) {
        if (name === "effect" && dep.version !== undefined) versions.add(dep.version)
        walk(dep.dependencies as never)
      }
    }
    walk(JSON.parse(ls.stdout).dependencies)
    expect([...versions]).toEqual(["4.1.0"])
    const installed = JSON.parse(
      readFileSync(join(app, "node_modules", "@service-sdk", "effect", "package.json"), "utf8")
    )
    expect(installed.version).toMatch(/^2\./)
    expect(installed.peerDependencies).toEqual({ effect: "^4.1.0", "@service-sdk/emulator": "^1.0.0" })
    expect(installed.peerDependenciesMeta).toEqual({ "@service-sdk/emulator": { optional: true } })
    // the emulator and the CLI bring nothing: no dependency, no peer (their Effect 3 is inside the bundle)
    for (const name of Object.keys(bundles)) {
      const manifest = JSON.parse(readFileSync(join(app, "node_modules", ...name.split("/"), "package.json"), "utf8"))
      expect(manifest.dependencies ?? {}, name).toEqual({})
      expect(manifest.peerDependencies ?? {}, name).toEqual({})
    }
  })

  it("type-checks and runs docs/effect4.md's client-credentials example against the emulator", async () => {
    writeFileSync(join(app, "main.ts"), docBlocks()[0]!)
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: []
        },
        include: ["main.ts"]
      })
    )
    const typed = await run(join(effect4, "node_modules", ".bin", "tsc"), ["-p", app], app)
    expect(typed.output).toBe("")
    const ran = await run(node, ["main.ts"], app, {
      SERVICE_SDK_AUTH_URL: emulator.authUrl,
      SERVICE_SDK_API_URL: emulator.apiUrl,
      SERVICE_SDK_CLIENT_ID: emulator.clientId,
      SERVICE_SDK_CLIENT_SECRET: emulator.clientSecret
    })
    expect(ran.status, ran.output).toBe(0)
    expect(ran.output).toMatch(/\d+ tracks/)
    const stats = await emulator.stats()
    expect(stats.tokenRequests.client_credentials).toBe(1)
  })

  it("runs docs/effect4.md's testing example under @effect/vitest 4 with the mock HttpClient", async () => {
    writeFileSync(join(app, "test", "album.test.ts"), docBlocks()[2]!)
    const tested = await run(node, [join(app, "node_modules", "vitest", "vitest.mjs"), "run"], app)
    expect(tested.status, tested.output).toBe(0)
    expect(tested.output).toMatch(/1 passed/)
  })

  it("runs docs/testing.md's Effect 4 test files in this fresh app (issue 38 item 4), by name from its packages", async () => {
    type Block = { readonly lines: ReadonlyArray<string> }
    const { extractBlocks, lineOf } = (await import(join(root, "scripts", "readme-check.mjs"))) as {
      readonly extractBlocks: (markdown: string) => ReadonlyArray<Block>
      readonly lineOf: (block: Block) => "effect3" | "effect4"
    }
    const files = extractBlocks(readFileSync(join(root, "docs", "testing.md"), "utf8"))
      .filter((block) => lineOf(block) === "effect4")
      .filter((block) => block.lines.some((line) => line.includes('from "@effect/vitest"')))
      .map((block, index) => [`guide${index + 1}.test.ts`, `${block.lines.join("\n")}\n`] as const)
    expect(files.length).toBeGreaterThanOrEqual(2)
    for (const [name, text] of files) writeFileSync(join(app, "test", name), text)
    const declared = files.reduce((sum, [, text]) => sum + [...text.matchAll(/^\s*it(\.effect|\.live)?\(/gm)].length, 0)
    const tested = await run(node, [join(app, "node_modules", "vitest", "vitest.mjs"), "run", "guide"], app)
    expect(tested.status, tested.output).toBe(0)
    const plain = tested.output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "")
    expect(plain).toMatch(new RegExp(`Tests\\s+${declared} passed \\(${declared}\\)`))
  })

  it("tests the app's own code against the installed emulator, under vitest 5 and @effect/vitest 4", async () => {
    mkdirSync(join(app, "src"), { recursive: true })
    // the app's code: what it asks the Service, on the SDK's client
    writeFileSync(
      join(app, "src", "albums.ts"),
      [
        'import { ServiceClient } from "@service-sdk/effect"',
        'import { Effect } from "effect"',
        "",
        "export const albumTitle = (id: string) =>",
        "  Effect.gen(function* () {",
        "    const client = yield* ServiceClient",
        "    const album = yield* client.albums.get(id)",
        '    return album.name + " (" + album.tracks.items.length + " tracks)"',
        "  })",
        ""
      ].join("\n")
    )
    writeFileSync(
      join(app, "test", "albums.emulator.test.ts"),
      [
        'import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"',
        'import { ServiceClient } from "@service-sdk/effect"',
        'import { Emulator as EmulatorLayer } from "@service-sdk/effect/testing"',
        'import { Emulator, type EmulatorHandle } from "@service-sdk/emulator"',
        'import { Effect, Layer } from "effect"',
        'import { FetchHttpClient } from "effect/http"',
        'import { albumTitle } from "../src/albums.ts"',
        "",
        "let emulator: EmulatorHandle",
        "beforeAll(async () => {",
        "  emulator = await Emulator.start()",
        "})",
        "afterAll(() => emulator.close())",
        "",
        'describe("albumTitle", () => {',
        '  it.live("against Emulator.start()", () =>',
        "    Effect.gen(function* () {",
        '      const title = yield* albumTitle("6akEvsycLGftJxYudPjmqK")',
        "      expect(title).toMatch(/\\(\\d+ tracks\\)$/)",
        "      const stats = yield* Effect.promise(() => emulator.stats())",
        "      expect(stats.tokenRequests.client_credentials).toBe(1)",
        "    }).pipe(",
        "      Effect.provide(",
        "        Layer.suspend(() =>",
        "          ServiceClient.layerClientCredentials({",
        "            clientId: emulator.clientId,",
        "            clientSecret: emulator.clientSecret,",
        "            authUrl: emulator.authUrl,",
        "            apiUrl: emulator.apiUrl",
        "          })",
        "        ).pipe(Layer.provide(FetchHttpClient.layer))",
        "      )",
        "    )",
        "  )",
        "",
        '  it.live("against @service-sdk/effect/testing\'s Emulator.layer()", () =>',
        "    Effect.gen(function* () {",
        '      const title = yield* albumTitle("6akEvsycLGftJxYudPjmqK")',
        "      expect(title).toMatch(/tracks\\)$/)",
        "      const stats = yield* (yield* EmulatorLayer).stats",
        "      expect(stats.apiRequests.total).toBe(1)",
        "    }).pipe(",
        "      Effect.provide(",
        "        ServiceClient.layerClientCredentials().pipe(",
        "          Layer.provideMerge(EmulatorLayer.layer()),",
        "          Layer.provide(FetchHttpClient.layer)",
        "        )",
        "      )",
        "    )",
        "  )",
        "})",
        ""
      ].join("\n")
    )
    const tested = await run(node, [join(app, "node_modules", "vitest", "vitest.mjs"), "run", "albums.emulator"], app)
    expect(tested.status, tested.output).toBe(0)
    expect(tested.output).toMatch(/2 passed/)
    // the emulator's own runtime (Effect 3, inside its bundle) prints nothing into the app's output
    expect(tested.output).not.toMatch(/Executing an Effect versioned|level=WARN|WARN \(#/)
  })

  it("runs the installed CLI's bin (its own Effect 3 inside): a token from its embedded emulator", async () => {
    const bin = join(app, "node_modules", ".bin", "service-sdk")
    const help = await run(node, [bin, "--help"], app)
    expect(help.status, help.output).toBe(0)
    expect(help.output).toContain("whoami")
    const token = await run(node, [bin, "token", "--emulator"], app)
    expect(token.status, token.output).toBe(0)
    expect(token.stdout).toMatch(/\S/)
    expect(token.output).not.toMatch(/WARN|ERROR \(#/)
  })

  // as the Effect 3 line's consumer test checks its packages (the root's publint and attw)
  it.each([
    ["@service-sdk/effect", "service-sdk"],
    ["@service-sdk/redis", "redis"]
  ])("publint and attw --profile esm-only are clean for %s", async (name, dir) => {
    const bin = (tool: string) => join(root, "node_modules", ".bin", tool)
    const publint = await run(bin("publint"), ["run", join(effect4, dir), "--strict"], root)
    expect(publint.status, publint.output).toBe(0)
    expect(publint.output).not.toMatch(/warning|error|suggestion/i)
    const attw = await run(bin("attw"), [tarballs[name]!, "--profile", "esm-only", "--format", "ascii"], root)
    expect(attw.status, attw.output).toBe(0)
  })
})
