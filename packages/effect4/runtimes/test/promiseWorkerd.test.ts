/**
 * A Cloudflare Worker in workerd (miniflare, no account) bundled from `@service-sdk/promise` as wrangler bundles it
 * (its default conditions `workerd`, `worker`, `browser`; the built package, not its sources): the package's browser
 * bundle, with no Node built-in, so the Worker runs without `nodejs_compat`. It serves requests by calling the
 * emulator's API with an app token (many concurrent requests, one token request), and the file, directory and Redis
 * caches are ConfigurationErrors naming the reason (issue 41 item 2).
 */
import { build, type Metafile } from "esbuild"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  burst,
  fixtures,
  renewsThroughBursts,
  repositoryRoot,
  runtimesDir,
  skipWhenMissing,
  workerBesideEmulator,
  workerdMissing
} from "./support/runtimes.js"

const promiseDist = join(repositoryRoot, "packages", "promise", "dist")

/** The fixture bundled as wrangler does by default: platform neutral, conditions `workerd`, `worker`, `browser`. */
const bundleWorker = async (outfile: string): Promise<Metafile> => {
  const result = await build({
    absWorkingDir: runtimesDir,
    entryPoints: [join(fixtures, "promiseWorker.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    metafile: true,
    logLevel: "error"
  })
  return result.metafile
}

describe("@service-sdk/promise bundled for a Worker (wrangler's conditions)", () => {
  it("takes the package's browser bundle: no Node built-in, no createRequire", async () => {
    const dir = mkdtempSync(join(tmpdir(), "service-sdk-promise-worker-"))
    try {
      const metafile = await bundleWorker(join(dir, "worker.mjs"))
      const inputs = Object.keys(metafile.inputs)
      expect(inputs.filter((input) => input.includes("promise/dist/"))).toEqual([
        expect.stringMatching(/promise\/dist\/browser\.js$/)
      ])
      const external = Object.values(metafile.inputs).flatMap((input) =>
        input.imports.filter((i) => i.external === true).map((i) => i.path)
      )
      expect(external).toEqual([])
      expect(readFileSync(join(dir, "worker.mjs"), "utf8")).not.toMatch(/createRequire|from ["']node:/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("workerd (miniflare): a Worker on @service-sdk/promise, without nodejs_compat", () => {
  if (skipWhenMissing("workerd", workerdMissing)) return
  const world = workerBesideEmulator({
    bundle: async (outfile) => {
      expect(existsSync(join(promiseDist, "browser.js")), "the built @service-sdk/promise (npm run build)").toBe(true)
      return bundleWorker(outfile)
    }
  })

  it("100 concurrent requests in one isolate are served with one token request", async () => {
    const before = await world.tokenRequests()
    expect(await burst(world.mf(), "/shared", 100)).toEqual(Array(100).fill(200))
    expect((await world.tokenRequests()) - before).toBe(1)
  })

  it("later requests are served by calling the emulator's API with the isolate's app token", async () => {
    const before = await world.tokenRequests()
    for (let i = 0; i < 5; i++) {
      const response = await world.mf().dispatchFetch("http://worker/")
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ album: "Loopback Sessions" })
    }
    expect((await world.tokenRequests()) - before).toBe(0)
    expect((await world.emulator().stats()).apiRequests.byStatus).toEqual({ 200: 105 })
  })

  it("50 concurrent first requests with the package alone (no `ready`) are all served with one token request", async () => {
    const before = await world.tokenRequests()
    expect(await burst(world.mf(), "/plain", 50)).toEqual(Array(50).fill(200))
    expect((await world.tokenRequests()) - before).toBe(1)
  })

  it.each([
    ["file", "fileTokenCache: a Cloudflare Worker has no file system that outlives a request"],
    ["directory", "directoryTokenStore: a Cloudflare Worker has no file system that outlives a request"],
    ["redis", "RedisTokenCache: a Cloudflare Worker cannot keep a Redis connection"]
  ])("a %s cache in a Worker is a ConfigurationError that says why", async (cache, reason) => {
    const response = await world.mf().dispatchFetch(`http://worker/cache/${cache}`)
    const body = (await response.json()) as { made: boolean; error?: string }
    expect(body.made).toBe(false)
    expect(body.error).toContain("ConfigurationError")
    expect(body.error).toContain(reason)
  })
})

const routes = [
  { name: "every token fetch awaited through one promise (`ready`)", route: "/shared" },
  { name: "the package alone (no `ready`)", route: "/plain" }
] as const

describe.each(routes)("workerd (miniflare): a Worker on @service-sdk/promise, renewals, $name", ({ route }) => {
  if (skipWhenMissing("workerd", workerdMissing)) return
  // 12 s tokens: renewed at half their lifetime (6 s), so a renewal comes within the test, each still valid 6 s more
  const world = workerBesideEmulator({ bundle: bundleWorker, emulatorArgs: ["--token-lifetime", "12"] })

  it(
    "bursts of concurrent requests through a renewal: all served, one token request per renewal",
    () => renewsThroughBursts(world, route),
    180_000
  )
})
