/**
 * The runtimes beside Node that the Effect 4 project installs from the npm registry (devDependencies `bun`, `deno`
 * and `miniflare`, whose `workerd` comes in `@cloudflare/workerd-linux-64`): where their binaries are, how a fixture
 * runs on them, and the rule for a missing one (a loud skip here, a failing test where CI or
 * SERVICE_SDK_REQUIRE_RUNTIMES=1 is set).
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { build } from "esbuild"
import type { Miniflare } from "miniflare"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type RunningEmulator, startEmulator } from "../../../service-sdk/test/support/emulator.js"

export const runtimesDir = join(import.meta.dirname, "..", "..")
export const effect4Dir = join(runtimesDir, "..")
export const repositoryRoot = join(effect4Dir, "..", "..")
export const fixtures = join(runtimesDir, "fixtures")
const bin = join(effect4Dir, "node_modules", ".bin")

/** The built `@service-sdk/promise` (the root's build: `npm install` or `npm run build`). */
export const promiseEntry = join(repositoryRoot, "packages", "promise", "dist", "index.js")

/** In CI (`CI` set, or SERVICE_SDK_REQUIRE_RUNTIMES=1) a missing runtime fails rather than skips. */
export const required =
  process.env.SERVICE_SDK_REQUIRE_RUNTIMES === "1" ||
  (process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false")

export interface Runtime {
  readonly name: "bun" | "deno" | "node"
  readonly binary: string
  /** The arguments that run a module file. */
  readonly run: (file: string, ...args: ReadonlyArray<string>) => ReadonlyArray<string>
  /** Why it cannot run here, or undefined. */
  readonly missing: string | undefined
}

const probe = (binary: string): string | undefined => {
  if (!existsSync(binary)) return `${binary} is not installed (npm install in packages/effect4)`
  const version = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 60_000 })
  return version.status === 0 ? undefined : `${binary} --version failed: ${version.stderr || version.error}`
}

export const bun: Runtime = {
  name: "bun",
  binary: join(bin, "bun"),
  run: (file, ...args) => [file, ...args],
  missing: probe(join(bin, "bun"))
}

export const deno: Runtime = {
  name: "deno",
  binary: join(bin, "deno"),
  // no prompts; the fixtures read the environment, the file system and the loopback network
  run: (file, ...args) => ["run", "--allow-all", "--no-prompt", file, ...args],
  missing: probe(join(bin, "deno"))
}

/** The Node that runs the Effect 4 line (the comparison in the throughput figures). */
export const node: Runtime = {
  name: "node",
  binary: process.execPath,
  run: (file, ...args) => [file, ...args],
  missing: undefined
}

/** workerd, as miniflare finds it (the `workerd` package's binary). */
export const workerdMissing = (() => {
  const binary = join(bin, "workerd")
  return probe(binary)
})()

/**
 * Either a failing test (CI) or a loud warning, for a runtime that cannot run here; returns whether the suite
 * should be skipped.
 */
export const skipWhenMissing = (name: string, missing: string | undefined): boolean => {
  if (missing === undefined) return false
  if (required) {
    it(`${name} must run where CI or SERVICE_SDK_REQUIRE_RUNTIMES=1 is set`, () => {
      expect.fail(`${missing}, so the ${name} tests would be skipped`)
    })
  } else {
    console.warn(
      `\n*** SKIPPING the ${name} tests: ${missing}. Set SERVICE_SDK_REQUIRE_RUNTIMES=1 to fail instead. ***\n`
    )
  }
  return true
}

/**
 * Runs `file` on a runtime; resolves with its last stdout line parsed as JSON and its stderr (fails with its output
 * otherwise).
 */
export const runFixtureWithOutput = (
  runtime: Runtime,
  file: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  timeoutMs = 90_000
): Promise<{ readonly result: any; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(runtime.binary, runtime.run(file, ...args), {
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${runtime.name} ${file} did not finish in ${timeoutMs} ms:\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.on("error", reject)
    child.on("exit", (code) => {
      clearTimeout(timer)
      const last = stdout.trim().split("\n").at(-1) ?? ""
      if (code !== 0) return reject(new Error(`${runtime.name} ${file} exited ${code}:\n${stdout}\n${stderr}`))
      try {
        resolve({ result: JSON.parse(last), stderr })
      } catch {
        reject(new Error(`${runtime.name} ${file} printed no JSON:\n${stdout}\n${stderr}`))
      }
    })
  })

/** {@link runFixtureWithOutput}'s JSON line alone. */
export const runFixture = async (
  runtime: Runtime,
  file: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  timeoutMs = 90_000
): Promise<any> => (await runFixtureWithOutput(runtime, file, args, env, timeoutMs)).result

/** Node's modules named without `node:` (ioredis's `net`, `tls`...), left to workerd's nodejs_compat as `node:…`. */
const nodeBuiltins = {
  name: "node-builtins",
  setup(build: { onResolve: (options: { filter: RegExp }, callback: (args: { path: string }) => unknown) => void }) {
    const names = builtinModules.filter((name) => !name.startsWith("_")).map((name) => name.replace(/[/]/g, "\\/"))
    build.onResolve({ filter: new RegExp(`^(${names.join("|")})$`) }, (args) => ({
      path: `node:${args.path}`,
      external: true
    }))
  }
}

/**
 * Bundles a fixture with esbuild from the Effect 4 line's sources (the `source` condition), for a runtime with
 * Node's modules (`node`: Bun, Deno) or for a Worker: platform neutral, `node:*` left to workerd's nodejs_compat,
 * with wrangler's default conditions (`worker`: `workerd`, `worker`, `browser`, so the package's browser entry) or
 * without `browser` (`worker-node-entry`: the Node entry).
 */
export const bundle = async (
  entry: string,
  outfile: string,
  target: "node" | "worker" | "worker-node-entry"
): Promise<void> => {
  await build({
    absWorkingDir: runtimesDir,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    // "error": the Worker fixture reads `TokenStore` from the browser entry, which has none, on purpose
    logLevel: "error",
    ...(target === "node"
      ? { platform: "node", conditions: ["source"] }
      : {
          platform: "neutral",
          conditions:
            target === "worker" ? ["workerd", "worker", "browser", "source"] : ["workerd", "worker", "source"],
          mainFields: ["module", "main"],
          external: ["node:*"],
          plugins: [nodeBuiltins]
        })
  })
}

/**
 * The emulator, as the Effect 4 line's tests start it, with up to three tries: on a loaded machine its cold start
 * can outlast the helper's own 20 s wait.
 */
export const startEmulatorPatiently = async (args: ReadonlyArray<string> = []): Promise<RunningEmulator> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmulator(args)
    } catch (error) {
      if (attempt === 3) throw error
    }
  }
}

/**
 * `count` concurrent requests to `path` of one isolate: each one's status, 200 for a served request, otherwise its
 * status and body (a request workerd cancelled reads "The Workers runtime canceled this request...").
 */
export const burst = async (mf: Miniflare, path: string, count: number) => {
  const responses = await Promise.all(Array.from({ length: count }, () => mf.dispatchFetch(`http://worker${path}`)))
  const bodies = await Promise.all(
    responses.map((response) => response.text().catch((error: unknown) => `unreadable: ${error}`))
  )
  return responses.map((response, i) =>
    response.status === 200 && bodies[i] === JSON.stringify({ album: "Loopback Sessions" })
      ? 200
      : `${response.status} ${bodies[i]}`
  )
}

/** A Worker in miniflare beside its own emulator, made before the tests of the enclosing `describe`, gone after. */
export interface WorkerWorld {
  readonly mf: () => Miniflare
  readonly emulator: () => RunningEmulator
  /** The emulator's client-credentials token requests so far. */
  readonly tokenRequests: () => Promise<number>
}

export const workerBesideEmulator = (options: {
  /** Writes the Worker's bundle to `outfile`. */
  readonly bundle: (outfile: string) => Promise<unknown>
  readonly compatibilityFlags?: ReadonlyArray<string>
  readonly emulatorArgs?: ReadonlyArray<string>
}): WorkerWorld => {
  let emulator: RunningEmulator | undefined
  let dir: string | undefined
  let mf: Miniflare | undefined
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "service-sdk-workerd-"))
    const script = join(dir, "worker.mjs")
    const [started] = await Promise.all([startEmulatorPatiently(options.emulatorArgs), options.bundle(script)])
    emulator = started
    const { Miniflare } = await import("miniflare")
    mf = new Miniflare({
      modules: true,
      script: readFileSync(script, "utf8"),
      compatibilityDate: "2026-07-01",
      ...(options.compatibilityFlags === undefined ? {} : { compatibilityFlags: [...options.compatibilityFlags] }),
      bindings: {
        AUTH_URL: emulator.authUrl,
        API_URL: emulator.apiUrl,
        CLIENT_ID: emulator.clientId,
        CLIENT_SECRET: emulator.clientSecret
      }
    })
    await mf.ready
  })
  afterAll(async () => {
    await mf?.dispose()
    await emulator?.stop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })
  return {
    mf: () => mf!,
    emulator: () => emulator!,
    tokenRequests: async () => (await emulator!.stats()).tokenRequests.client_credentials ?? 0
  }
}

/**
 * Bursts of 30 concurrent requests to `route`, every 2 s until the token is renewed (bounded: the token's whole
 * lifetime and more, with the emulator's 12 s tokens): every request served, one token request per renewal.
 */
export const renewsThroughBursts = async (world: WorkerWorld, route: string) => {
  expect(await burst(world.mf(), route, 30)).toEqual(Array(30).fill(200))
  expect(await world.tokenRequests()).toBe(1)
  const deadline = Date.now() + 90_000
  while ((await world.tokenRequests()) === 1 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(await burst(world.mf(), route, 30)).toEqual(Array(30).fill(200))
  }
  expect(await world.tokenRequests()).toBe(2)
}
