/**
 * A Cloudflare Worker in workerd (miniflare, no account), bundled by esbuild from the Effect 4 line: it serves
 * requests by calling the emulator's API with an app token. miniflare's outbound network allows loopback addresses,
 * so the Worker's `fetch` reaches the emulator on 127.0.0.1.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Miniflare } from "miniflare"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningEmulator } from "../../service-sdk/test/support/emulator.js"
import { bundle, burst, fixtures, skipWhenMissing, startEmulatorPatiently, workerdMissing } from "./support/runtimes.js"

const bundlings = [
  { name: "wrangler's conditions (workerd, worker, browser): the browser entry", target: "worker" },
  { name: "the Node entry (workerd, worker) on nodejs_compat", target: "worker-node-entry" }
] as const

describe.each(bundlings)("workerd (miniflare), $name", ({ target }) => {
  if (skipWhenMissing("workerd", workerdMissing)) return

  let emulator: RunningEmulator
  let dir: string
  let mf: Miniflare

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "service-sdk-workerd-"))
    const script = join(dir, "worker.mjs")
    const [started] = await Promise.all([startEmulatorPatiently(), bundle(join(fixtures, "worker.ts"), script, target)])
    emulator = started
    const { Miniflare } = await import("miniflare")
    mf = new Miniflare({
      modules: true,
      script: readFileSync(script, "utf8"),
      compatibilityDate: "2026-07-01",
      compatibilityFlags: ["nodejs_compat"],
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

  it("50 concurrent first requests with the SDK alone (no `ready`) are all served with one token request", async () => {
    const before = await tokenRequests()
    expect(await burst(mf, "/plain", 50)).toEqual(Array(50).fill(200))
    expect((await tokenRequests()) - before).toBe(1)
  })

  it("later requests reuse the isolate's token", async () => {
    const before = await tokenRequests()
    for (let i = 0; i < 5; i++) {
      const response = await mf.dispatchFetch("http://worker/")
      expect(await response.json()).toEqual({ album: "Loopback Sessions" })
    }
    expect((await tokenRequests()) - before).toBe(0)
  })

  it.each([
    ["file", "TokenCache.file: a Cloudflare Worker has no file system that outlives a request"],
    ...(target === "worker"
      ? [] // the browser entry has no TokenStore
      : [["directory", "TokenStore.directory: a Cloudflare Worker has no file system that outlives a request"]]),
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
  { name: "the SDK alone (no `ready`)", route: "/plain" }
] as const

describe.each(routes)("workerd (miniflare): renewals, $name", ({ route }) => {
  if (skipWhenMissing("workerd", workerdMissing)) return

  let emulator: RunningEmulator
  let dir: string
  let mf: Miniflare

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "service-sdk-workerd-renewal-"))
    const script = join(dir, "worker.mjs")
    // 40 s tokens: renewed well before their end, so a renewal comes within the test
    const [started] = await Promise.all([
      startEmulatorPatiently(["--token-lifetime", "40"]),
      bundle(join(fixtures, "worker.ts"), script, "worker")
    ])
    emulator = started
    const { Miniflare } = await import("miniflare")
    mf = new Miniflare({
      modules: true,
      script: readFileSync(script, "utf8"),
      compatibilityDate: "2026-07-01",
      compatibilityFlags: ["nodejs_compat"],
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
