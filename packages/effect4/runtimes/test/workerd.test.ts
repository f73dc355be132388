/**
 * A Cloudflare Worker in workerd (miniflare, no account), bundled by esbuild from the Effect 4 line: it serves
 * requests by calling the emulator's API with an app token. miniflare's outbound network allows loopback addresses,
 * so the Worker's `fetch` reaches the emulator on 127.0.0.1.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  bundle,
  burst,
  fixtures,
  renewsThroughBursts,
  skipWhenMissing,
  workerBesideEmulator,
  workerdMissing
} from "./support/runtimes.js"

const bundlings = [
  { name: "wrangler's conditions (workerd, worker, browser): the browser entry", target: "worker" },
  { name: "the Node entry (workerd, worker) on nodejs_compat", target: "worker-node-entry" }
] as const

describe.each(bundlings)("workerd (miniflare), $name", ({ target }) => {
  if (skipWhenMissing("workerd", workerdMissing)) return
  const world = workerBesideEmulator({
    bundle: (outfile) => bundle(join(fixtures, "worker.ts"), outfile, target),
    compatibilityFlags: ["nodejs_compat"]
  })

  it("100 concurrent requests in one isolate are served with one token request", async () => {
    const before = await world.tokenRequests()
    expect(await burst(world.mf(), "/shared", 100)).toEqual(Array(100).fill(200))
    expect((await world.tokenRequests()) - before).toBe(1)
  })

  it("50 concurrent first requests with the SDK alone (no `ready`) are all served with one token request", async () => {
    const before = await world.tokenRequests()
    expect(await burst(world.mf(), "/plain", 50)).toEqual(Array(50).fill(200))
    expect((await world.tokenRequests()) - before).toBe(1)
  })

  it("later requests reuse the isolate's token", async () => {
    const before = await world.tokenRequests()
    for (let i = 0; i < 5; i++) {
      const response = await world.mf().dispatchFetch("http://worker/")
      expect(await response.json()).toEqual({ album: "Loopback Sessions" })
    }
    expect((await world.tokenRequests()) - before).toBe(0)
  })

  it.each([
    ["file", "TokenCache.file: a Cloudflare Worker has no file system that outlives a request"],
    ...(target === "worker"
      ? [] // the browser entry has no TokenStore
      : [["directory", "TokenStore.directory: a Cloudflare Worker has no file system that outlives a request"]]),
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
  { name: "the SDK alone (no `ready`)", route: "/plain" }
] as const

describe.each(routes)("workerd (miniflare): renewals, $name", ({ route }) => {
  if (skipWhenMissing("workerd", workerdMissing)) return
  // 12 s tokens: renewed at half their lifetime (6 s), so a renewal comes within the test, each still valid 6 s more
  const world = workerBesideEmulator({
    bundle: (outfile) => bundle(join(fixtures, "worker.ts"), outfile, "worker"),
    compatibilityFlags: ["nodejs_compat"],
    emulatorArgs: ["--token-lifetime", "12"]
  })

  it(
    "bursts of concurrent requests through a renewal: all served, one token request per renewal",
    () => renewsThroughBursts(world, route),
    180_000
  )
})
