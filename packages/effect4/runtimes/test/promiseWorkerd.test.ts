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
import type { Miniflare } from "miniflare"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningEmulator } from "../../service-sdk/test/support/emulator.js"
import {
  burst,
  fixtures,
  repositoryRoot,
  runtimesDir,
  skipWhenMissing,
  startEmulatorPatiently,
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

  let emulator: RunningEmulator
  let dir: string
  let mf: Miniflare

  beforeAll(async () => {
    expect(existsSync(join(promiseDist, "browser.js")), "the built @service-sdk/promise (npm run build)").toBe(true)
    dir = mkdtempSync(join(tmpdir(), "service-sdk-promise-workerd-"))
    const script = join(dir, "worker.mjs")
    const [started] = await Promise.all([startEmulatorPatiently(), bundleWorker(script)])
    emulator = started
    const { Miniflare } = await import("miniflare")
    mf = new Miniflare({
      modules: true,
      script: readFileSync(script, "utf8"),
      compatibilityDate: "2026-07-01",
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

  const tokenRequests = async () => (await emulator.stats()).tokenRequests.client_credentials ?? 0

  it("100 concurrent requests in one isolate are served with one token request", async () => {
    const before = await tokenRequests()
    const responses = await Promise.all(Array.from({ length: 100 }, () => mf.dispatchFetch("http://worker/shared")))
    const bodies = await Promise.all(
      responses.map((response) => response.text().catch((error: unknown) => `unreadable: ${error}`))
    )
    expect(responses.map((response, i) => (response.status === 200 ? 200 : `${response.status} ${bodies[i]}`))).toEqual(
      Array(100).fill(200)
    )
    expect(new Set(bodies)).toEqual(new Set([JSON.stringify({ album: "Loopback Sessions" })]))
    expect((await tokenRequests()) - before).toBe(1)
  })

  it("later requests are served by calling the emulator's API with the isolate's app token", async () => {
    const before = await tokenRequests()
    for (let i = 0; i < 5; i++) {
      const response = await mf.dispatchFetch("http://worker/")
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ album: "Loopback Sessions" })
    }
    expect((await tokenRequests()) - before).toBe(0)
    expect((await emulator.stats()).apiRequests.byStatus).toEqual({ 200: 105 })
  })

  it("50 concurrent first requests with the package alone (no `ready`) are all served with one token request", async () => {
    const before = await tokenRequests()
    expect(await burst(mf, "/plain", 50)).toEqual(Array(50).fill(200))
    expect((await tokenRequests()) - before).toBe(1)
  })

  it.each([
    ["file", "fileTokenCache: a Cloudflare Worker has no file system that outlives a request"],
    ["directory", "directoryTokenStore: a Cloudflare Worker has no file system that outlives a request"],
    ["redis", "RedisTokenCache: a Cloudflare Worker cannot keep a Redis connection"]
  ])("a %s cache in a Worker is a ConfigurationError that says why", async (cache, reason) => {
    const response = await mf.dispatchFetch(`http://worker/cache/${cache}`)
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

  let emulator: RunningEmulator
  let dir: string
  let mf: Miniflare

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "service-sdk-promise-workerd-renewal-"))
    const script = join(dir, "worker.mjs")
    // 40 s tokens: renewed well before their end, so a renewal comes within the test
    const [started] = await Promise.all([startEmulatorPatiently(["--token-lifetime", "40"]), bundleWorker(script)])
    emulator = started
    const { Miniflare } = await import("miniflare")
    mf = new Miniflare({
      modules: true,
      script: readFileSync(script, "utf8"),
      compatibilityDate: "2026-07-01",
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

  const tokenRequests = async () => (await emulator.stats()).tokenRequests.client_credentials ?? 0

  it("bursts of concurrent requests through a renewal: all served, one token request per renewal", async () => {
    expect(await burst(mf, route, 30)).toEqual(Array(30).fill(200))
    expect(await tokenRequests()).toBe(1)
    // bursts every 2 s until the token is renewed (bounded: the token's whole lifetime and more)
    const deadline = Date.now() + 90_000
    while ((await tokenRequests()) === 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      expect(await burst(mf, route, 30)).toEqual(Array(30).fill(200))
    }
    expect(await tokenRequests()).toBe(2)
  }, 180_000)
})
