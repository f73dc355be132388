/**
 * Part 12. `@service-sdk/promise`, the Promise API as one self-contained package: what installing it costs (packed
 * and unpacked size, packages installed, from its tarball into an empty project), a cold `import` of it in that
 * project against google-auth-library's import (also with `NODE_COMPILE_CACHE`, on a Node that has it), and the cached-path and herd figures of parts 2-3 through the
 * package, against `service-sdk/promise` (the facade it is built from) in the same run. Targets: 0 dependencies
 * (1 package installed), unpacked ≤ 2 MB, cached path and herd within the noise of the facade's; and (issue 43, the
 * package on the Effect 4 runtime) cached `await getAccessToken()` ≥ 1.5× google-auth-library's throughput, the herd
 * at K = 10,000 ≤ 1.1× one cold call, cold import ≤ 1.0× google-auth-library's with and without `NODE_COMPILE_CACHE`.
 * Reported beside them: the cached path on Bun and Deno against Node (`runtimeThroughput.ts`), where installed.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { AsyncClientCredentials as FacadeClientCredentials } from "@service-sdk/effect/promise"
import { type Context, credentials, repeatAsync } from "../context.js"
import { measure, median, type Ratio, ratioOf, timed } from "../harness.js"
import { gc, wallClockMillis } from "../machine.js"
import { googleAuth } from "../peers.js"
import { type Figure, figure } from "../report.js"
import type { PartResult } from "./part.js"

const benchDir = fileURLToPath(new URL("../../..", import.meta.url))
const packageDir = join(benchDir, "..", "promise")
const N = 1_000
const HERD = 1_000
/** the herd of issue 43's target, against one cold call */
const BIG_HERD = 10_000
const effect4Dir = join(benchDir, "..", "effect4")

interface Provider {
  readonly getAccessToken: () => Promise<string>
  readonly close: () => Promise<void>
}

/** Every package.json directly under a node_modules folder, at any depth: the packages installed. */
const countPackages = (modules: string): number =>
  readdirSync(modules, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .reduce((count, entry) => {
      const path = join(modules, entry.name)
      if (entry.name.startsWith("@")) return count + countPackages(path)
      const nested = join(path, "node_modules")
      return count + 1 + (readdirSync(path).includes("node_modules") ? countPackages(nested) : 0)
    }, 0)

const npm = (args: ReadonlyArray<string>, cwd: string) =>
  execFileSync("npm", [...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, npm_config_loglevel: "error", npm_config_fund: "false", npm_config_audit: "false" }
  })

/** Packs the package and installs the tarball into an empty project; sizes, packages, seconds. */
const install = (dir: string) => {
  // the build is `npm run bench`'s (scripts/build.mjs after tsc -b): packed as built
  const [packed] = JSON.parse(
    npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dir], packageDir)
  ) as ReadonlyArray<{
    readonly filename: string
    readonly size: number
    readonly unpackedSize: number
  }>
  const project = join(dir, "app")
  mkdirSync(project)
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
  const tarball = join(dir, packed!.filename.replace(/^@/, "").replace("/", "-"))
  const started = performance.now()
  npm(["install", "--prefer-offline", "--no-package-lock", tarball], project)
  const seconds = (performance.now() - started) / 1000
  return { project, packed: packed!, seconds, packages: countPackages(join(project, "node_modules")) }
}

/**
 * A Node with `NODE_COMPILE_CACHE` (≥ 22.1): this one, or the supported Node the Effect 4 line installs
 * (`packages/effect4`); undefined when there is none.
 */
const compileCacheNode = (): string | undefined => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
  if (major > 22 || (major === 22 && minor >= 1)) return process.execPath
  const installed = join(benchDir, "..", "effect4", "node_modules", ".bin", "node")
  return existsSync(installed) ? installed : undefined
}

/**
 * One process that imports `specifier` and exits: wall time from spawn to exit, and the process's own CPU time
 * (`process.cpuUsage()`, user + system, every thread) when the import has finished, written to fd 1 with `writeSync`
 * (touching `process.stdout` would cost both sides a stream).
 */
const coldImport = (
  cwd: string,
  specifier: string,
  options: { readonly node?: string; readonly env?: Record<string, string> } = {}
): { readonly ms: number; readonly cpuMs: number } => {
  const start = process.hrtime.bigint()
  const result = spawnSync(
    options.node ?? process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { writeSync } from "node:fs"; import * as m from "${specifier}"; void m; const u = process.cpuUsage(); writeSync(1, String((u.user + u.system) / 1000))`
    ],
    {
      cwd,
      encoding: "utf8",
      env: { ...process.env, ...options.env }
    }
  )
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0) throw new Error(`import "${specifier}" failed: ${result.stderr.slice(0, 500)}`)
  return { ms, cpuMs: Number(result.stdout) }
}

/** K concurrent calls on a fresh provider: wall time and the token requests the emulator answered. */
const herdRound = async (context: Context, provider: Provider, k = HERD) => {
  try {
    await gc(2)
    const before = await context.emulator.tokenRequests()
    const { ms } = await timed(() => Promise.all(Array.from({ length: k }, () => provider.getAccessToken())))
    return { ms, requests: (await context.emulator.tokenRequests()) - before }
  } finally {
    await provider.close()
  }
}

/** One cold call on a fresh provider: wall time. */
const coldRound = async (provider: Provider) => {
  try {
    await gc(2)
    return (await timed(() => provider.getAccessToken())).ms
  } finally {
    await provider.close()
  }
}

interface RuntimeRow {
  readonly name: "bun" | "deno"
  readonly version: string
  readonly callsPerSecond: Array<number>
  readonly node: Array<number>
}

/**
 * The package's cached path on Bun and Deno against Node (the Effect 4 line's Node where installed): each runtime a
 * process per round running `runtimeThroughput.js` (median of its samples), the runtimes rotating which goes first.
 * Bun and Deno are found where the Effect 4 project installs them from npm (`packages/effect4/node_modules/.bin`, as
 * the runtime tests do); a missing one is left out with a note.
 */
const runtimesThroughput = (context: Context) => {
  const bin = join(effect4Dir, "node_modules", ".bin")
  const script = fileURLToPath(new URL("../runtimeThroughput.js", import.meta.url))
  const entry = join(packageDir, "dist", "index.js")
  const node = existsSync(join(bin, "node")) ? join(bin, "node") : process.execPath
  const calls = context.quick ? 2_000 : 20_000
  const samples = context.quick ? 2 : 5
  const rounds = context.quick ? 1 : 3
  const version = (binary: string) => {
    if (!existsSync(binary)) return undefined
    const result = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 60_000 })
    return result.status === 0
      ? result.stdout
          .trim()
          .split("\n")[0]!
          .replace(/^deno /, "")
          .split(" ")[0]!
      : undefined
  }
  const runtimes = [
    { name: "node", binary: node, pre: [] as ReadonlyArray<string> },
    { name: "bun", binary: join(bin, "bun"), pre: [] },
    { name: "deno", binary: join(bin, "deno"), pre: ["run", "--allow-all", "--no-prompt"] }
  ] as const
  const present = runtimes.map((runtime) => ({ ...runtime, version: version(runtime.binary) }))
  const missing = present.filter((runtime) => runtime.version === undefined).map((runtime) => runtime.name)
  const available = present.filter((runtime) => runtime.version !== undefined)
  const options = JSON.stringify(credentials(context))
  const perRuntime = new Map<string, Array<number>>(available.map((runtime) => [runtime.name, []]))
  if (available.some((runtime) => runtime.name === "node") && available.length > 1) {
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < available.length; i++) {
        const runtime = available[(round + i) % available.length]!
        const result = spawnSync(
          runtime.binary,
          [...runtime.pre, script, entry, options, String(calls), String(samples)],
          {
            encoding: "utf8",
            timeout: 120_000,
            env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }
          }
        )
        if (result.status !== 0) {
          throw new Error(`${runtime.name} runtimeThroughput failed: ${(result.stderr ?? "").slice(0, 500)}`)
        }
        const { callsPerSecond } = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as {
          readonly callsPerSecond: ReadonlyArray<number>
        }
        perRuntime.get(runtime.name)!.push(median(callsPerSecond))
      }
    }
  }
  const nodeRounds = perRuntime.get("node") ?? []
  const rows: Array<RuntimeRow> = available
    .filter((runtime) => runtime.name !== "node" && nodeRounds.length > 0)
    .map((runtime) => ({
      name: runtime.name as "bun" | "deno",
      version: runtime.version!,
      callsPerSecond: perRuntime.get(runtime.name)!,
      node: nodeRounds
    }))
  const nodeVersion = present[0]!.version
  return { rows, missing, nodeVersion, calls, samples, rounds }
}

export const promisePackage = async (context: Context): Promise<PartResult> => {
  const dir = mkdtempSync(join(tmpdir(), "bench-promise-package-"))
  try {
    context.log("  packing and installing @service-sdk/promise")
    const installed = install(dir)
    const runs = context.sizes.coldImportRuns
    const mine: Array<number> = []
    const google: Array<number> = []
    const cpu = { mine: [] as Array<number>, google: [] as Array<number> }
    if (!context.quick) {
      coldImport(installed.project, "@service-sdk/promise")
      coldImport(benchDir, "google-auth-library")
    }
    for (let run = 0; run < runs; run++) {
      const ours = coldImport(installed.project, "@service-sdk/promise")
      const theirs = coldImport(benchDir, "google-auth-library")
      mine.push(ours.ms)
      google.push(theirs.ms)
      cpu.mine.push(ours.cpuMs)
      cpu.google.push(theirs.cpuMs)
    }
    // the same with V8's code cache on disk (NODE_COMPILE_CACHE, one directory each, primed by one run)
    const cacheNode = compileCacheNode()
    const cached = { mine: [] as Array<number>, google: [] as Array<number> }
    if (cacheNode !== undefined) {
      const env = (name: string) => ({ NODE_COMPILE_CACHE: join(dir, `compile-cache-${name}`) })
      const mineCached = () =>
        coldImport(installed.project, "@service-sdk/promise", { node: cacheNode, env: env("mine") }).ms
      const googleCached = () => coldImport(benchDir, "google-auth-library", { node: cacheNode, env: env("google") }).ms
      mineCached()
      googleCached()
      for (let run = 0; run < runs; run++) {
        cached.mine.push(mineCached())
        cached.google.push(googleCached())
      }
    }
    const cacheNodeVersion =
      cacheNode === undefined ? undefined : execFileSync(cacheNode, ["--version"], { encoding: "utf8" }).trim()

    // the package as built (dist, the same file the tarball carries), loaded into this process
    const Package = (await import("@service-sdk/promise")) as unknown as {
      readonly AsyncClientCredentials: new (options: object) => Provider
    }
    const makePackage = () => new Package.AsyncClientCredentials(credentials(context))
    const makeFacade = () => new FacadeClientCredentials(credentials(context))
    const pkg = makePackage()
    const facade = makeFacade()
    const token = await pkg.getAccessToken()
    await facade.getAccessToken()
    // google-auth-library as part 2 sets it up: a cached access token with a future expiry
    const gal = googleAuth(context.emulator, { access_token: token })
    gal.setCredentials(wallClockMillis() + 3_600_000)
    const [cachedPackage, cachedFacade, cachedGoogle] = await measure(
      [
        { name: "package", batch: N, async: true, fn: () => repeatAsync(() => pkg.getAccessToken(), N) },
        { name: "facade", batch: N, async: true, fn: () => repeatAsync(() => facade.getAccessToken(), N) },
        {
          name: "google-auth-library",
          batch: N,
          async: true,
          fn: () => repeatAsync(() => gal.client.getAccessToken(), N)
        }
      ],
      context.settings
    )
    await Promise.all([pkg.close(), facade.close()])

    const herd = { package: [] as Array<number>, facade: [] as Array<number>, requests: [] as Array<number> }
    await herdRound(context, makePackage())
    await herdRound(context, makeFacade())
    for (let round = 0; round < context.sizes.herdRounds; round++) {
      // alternate which goes first
      const order = round % 2 === 0 ? (["package", "facade"] as const) : (["facade", "package"] as const)
      for (const which of order) {
        const result = await herdRound(context, which === "package" ? makePackage() : makeFacade())
        herd[which].push(result.ms)
        if (which === "package") herd.requests.push(result.requests)
      }
    }

    // the herd at K = 10,000 against one cold call, both through the package, alternating which goes first
    context.log(`  herd K = ${BIG_HERD} through the package`)
    const big = { herd: [] as Array<number>, cold: [] as Array<number>, requests: [] as Array<number> }
    await herdRound(context, makePackage(), BIG_HERD)
    await coldRound(makePackage())
    for (let round = 0; round < context.sizes.herdRounds; round++) {
      const runs = [
        async () => {
          const result = await herdRound(context, makePackage(), BIG_HERD)
          big.herd.push(result.ms)
          big.requests.push(result.requests)
        },
        async () => {
          big.cold.push(await coldRound(makePackage()))
        }
      ]
      for (let i = 0; i < runs.length; i++) await runs[(round + i) % runs.length]!()
    }

    context.log("  the cached path on Node, Bun and Deno")
    const runtimes = runtimesThroughput(context)

    const mb = (bytes: number) => bytes / (1024 * 1024)
    const opsPerSecond = (nsPerOp: number) => 1e9 / nsPerOp
    const figures: ReadonlyArray<Figure> = [
      figure(
        {
          label: "packages installed (the tarball into an empty project)",
          value: installed.packages,
          unit: "requests"
        },
        { target: { on: "value", op: "==", limit: 1 } }
      ),
      figure({ label: "packed size", value: mb(installed.packed.size), unit: "MB" }),
      figure(
        { label: "unpacked size", value: mb(installed.packed.unpackedSize), unit: "MB" },
        { target: { on: "value", op: "<=", limit: 2 } }
      ),
      figure(
        { label: 'cold import "@service-sdk/promise": wall time', value: median(mine), unit: "ms" },
        {
          baseline: { label: 'import "google-auth-library"', value: median(google), unit: "ms" },
          ratio: ratioOf(mine, google),
          target: { on: "ratio", op: "<=", limit: 1 }
        }
      ),
      figure(
        { label: 'cold import "@service-sdk/promise": whole-process CPU', value: median(cpu.mine), unit: "ms" },
        {
          baseline: { label: "google-auth-library, the same", value: median(cpu.google), unit: "ms" },
          ratio: ratioOf(cpu.mine, cpu.google)
        }
      ),
      ...(cacheNode === undefined
        ? []
        : [
            figure(
              {
                label: `cold import with NODE_COMPILE_CACHE (node ${cacheNodeVersion}): wall time`,
                value: median(cached.mine),
                unit: "ms"
              },
              {
                baseline: {
                  label: "google-auth-library, the same",
                  value: median(cached.google),
                  unit: "ms"
                },
                ratio: ratioOf(cached.mine, cached.google),
                target: { on: "ratio", op: "<=", limit: 1 } as const
              }
            )
          ]),
      figure(
        {
          label: "cached getAccessToken() through the package",
          value: opsPerSecond(cachedPackage!.nsPerOp),
          unit: "ops/s"
        },
        {
          baseline: {
            label: "the same through service-sdk/promise",
            value: opsPerSecond(cachedFacade!.nsPerOp),
            unit: "ops/s"
          },
          ratio: ratioOf(cachedFacade!.rounds, cachedPackage!.rounds),
          target: { on: "ratio", op: ">=", limit: 0.8 }
        }
      ),
      figure(
        {
          label: `herd K = ${HERD.toLocaleString("en-US")} through the package: token requests (max)`,
          value: Math.max(...herd.requests),
          unit: "requests"
        },
        { target: { on: "value", op: "==", limit: 1 } }
      ),
      figure(
        {
          label: `herd K = ${HERD.toLocaleString("en-US")} through the package: wall time`,
          value: median(herd.package),
          unit: "ms"
        },
        {
          baseline: { label: "the same through service-sdk/promise", value: median(herd.facade), unit: "ms" },
          ratio: ratioOf(herd.package, herd.facade),
          target: { on: "ratio", op: "<=", limit: 1.25 }
        }
      ),
      figure(
        {
          label: "cached await getAccessToken() through the package vs google-auth-library",
          value: opsPerSecond(cachedPackage!.nsPerOp),
          unit: "ops/s"
        },
        {
          baseline: {
            label: "google-auth-library OAuth2Client.getAccessToken()",
            value: opsPerSecond(cachedGoogle!.nsPerOp),
            unit: "ops/s"
          },
          ratio: ratioOf(cachedGoogle!.rounds, cachedPackage!.rounds),
          target: { on: "ratio", op: ">=", limit: 1.5 }
        }
      ),
      figure(
        {
          label: `herd K = ${BIG_HERD.toLocaleString("en-US")} through the package: token requests (max)`,
          value: Math.max(...big.requests),
          unit: "requests"
        },
        { target: { on: "value", op: "==", limit: 1 } }
      ),
      figure(
        {
          label: `herd K = ${BIG_HERD.toLocaleString("en-US")} through the package: wall time`,
          value: median(big.herd),
          unit: "ms"
        },
        {
          baseline: { label: "one cold call through the package", value: median(big.cold), unit: "ms" },
          ratio: ratioOf(big.herd, big.cold),
          target: { on: "ratio", op: "<=", limit: 1.1 }
        }
      ),
      ...runtimes.rows.map((row) => {
        const ratio: Ratio = ratioOf(row.callsPerSecond, row.node)
        return figure(
          {
            label: `cached getAccessToken() through the package on ${row.name} ${row.version} (information)`,
            value: median(row.callsPerSecond),
            unit: "ops/s"
          },
          {
            baseline: { label: `the same on node ${runtimes.nodeVersion}`, value: median(row.node), unit: "ops/s" },
            ratio
          }
        )
      })
    ]
    return {
      title: "@service-sdk/promise (the Promise API as one package)",
      figures,
      notes: [
        `install: npm install --prefer-offline of the packed tarball into an empty project took ${installed.seconds.toFixed(1)} s (npm's cache warm); "requests" in the first row counts packages`,
        `cold import: ${runs} process(es) each, interleaved, spawn to exit; the package from the installed project, google-auth-library from packages/bench; CPU: each process's process.cpuUsage() (user + system, all threads) once the import is done, steadier than wall time on a busy machine`,
        cacheNode === undefined
          ? `cold import with NODE_COMPILE_CACHE: not measured (node ${process.versions.node} has no compile cache, and the supported Node of the Effect 4 line, packages/effect4, is not installed)`
          : `cold import with NODE_COMPILE_CACHE: node ${cacheNodeVersion}, a cache directory each, primed by one run; ${runs} process(es) each, interleaved`,
        "cached path and herd: both on their default HTTP client (the package: Node's fetch; the facade: undici), default options, the emulator's 20 ms token latency; ratio for the cached path = throughput over the facade's",
        `cached path against google-auth-library: its OAuth2Client with a cached access token and a future expiry_date (as part 2), in the same interleaved rounds; per call: package ${cachedPackage!.nsPerOp.toFixed(0)} ns, facade ${cachedFacade!.nsPerOp.toFixed(0)} ns, google-auth-library ${cachedGoogle!.nsPerOp.toFixed(0)} ns`,
        `herd K = ${BIG_HERD.toLocaleString("en-US")}: ${context.sizes.herdRounds} round(s) after one warm-up, each on fresh providers of the package, the herd and one cold call alternating which goes first, each after gc()`,
        runtimes.rows.length === 0
          ? `runtimes: not measured (${runtimes.missing.length === 0 ? "no runtime beside Node" : `${runtimes.missing.join(", ")} not installed: npm install in packages/effect4`})`
          : `runtimes (information): the built package's cached await getAccessToken() in a process per runtime and round (${runtimes.rounds} round(s), rotating; per process one warm-up sample then the median of ${runtimes.samples} samples of ${runtimes.calls.toLocaleString("en-US")} sequential calls), ratio = throughput over Node's in the same round; Bun and Deno from packages/effect4/node_modules/.bin (as the runtime tests find them)${runtimes.missing.length === 0 ? "" : `; not installed: ${runtimes.missing.join(", ")}`}`
      ],
      data: {
        install: installed,
        coldImportMs: { package: mine, googleAuthLibrary: google },
        coldImportCpuMs: { package: cpu.mine, googleAuthLibrary: cpu.google },
        coldImportCompileCacheMs: { node: cacheNodeVersion, package: cached.mine, googleAuthLibrary: cached.google },
        cachedPackage,
        cachedFacade,
        cachedGoogleAuthLibrary: cachedGoogle,
        herd,
        herd10000: big,
        runtimes
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
