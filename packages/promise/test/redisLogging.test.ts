/**
 * `RedisTokenCache.connect` of `@service-sdk/promise` (issue 42 item 11): its warning that the server may evict the
 * SDK's keys goes through the app's `logger` (stderr by default), never to stdout. Against a real `redis-server`
 * with `maxmemory-policy allkeys-lru` on a free loopback port (skipped, loudly, without one).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { RedisTokenCache, RedisTokenStore } from "@service-sdk/promise"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { createServer } from "node:net"

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

let redis: ChildProcess | undefined
let url = ""

if (!existsSync(REDIS_SERVER)) console.warn(`SKIPPED: no ${REDIS_SERVER}: the Redis logging test needs redis-server`)

describe.skipIf(!existsSync(REDIS_SERVER))("RedisTokenCache.connect's eviction-policy warning (42.11)", () => {
  beforeAll(async () => {
    const port = await freePort()
    url = `redis://127.0.0.1:${port}`
    const child = spawn(REDIS_SERVER, [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "allkeys-lru"
    ])
    redis = child
    await new Promise<void>((resolve, reject) => {
      let output = ""
      child.stdout!.on("data", (chunk) => {
        output += chunk
        if (output.includes("Ready to accept connections")) resolve()
      })
      child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)))
    })
  }, 60_000)

  afterAll(() => {
    redis?.kill("SIGTERM")
  })

  it("goes to the logger's warn, nothing to stdout; logLevel none drops it; the default is console.warn", async () => {
    const stdout = vi.spyOn(process.stdout, "write")
    const log = vi.spyOn(console, "log")
    try {
      const lines: Array<[string, string]> = []
      const logger = {
        error: (line: string) => lines.push(["error", line]),
        warn: (line: string) => lines.push(["warn", line]),
        info: (line: string) => lines.push(["info", line]),
        debug: (line: string) => lines.push(["debug", line])
      }
      const cache = await RedisTokenCache.connect({ url, key: "promise-test:token", logger })
      await cache.close()
      expect(lines).toEqual([["warn", expect.stringMatching(/^service-sdk WARN .*maxmemory-policy allkeys-lru/)]])

      const quiet: Array<string> = []
      const store = await RedisTokenStore.connect({
        url,
        prefix: "promise-test:users:",
        logLevel: "none",
        logger: { ...logger, warn: (line: string) => quiet.push(line) }
      })
      await store.close()
      expect(quiet).toEqual([])

      const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined)
      const byDefault = await RedisTokenCache.connect({ url, key: "promise-test:token" })
      await byDefault.close()
      expect(warn).toHaveBeenCalledTimes(1)
      expect(String(warn.mock.calls[0]![0])).toContain("maxmemory-policy")
      expect(log).not.toHaveBeenCalled()
      expect(stdout).not.toHaveBeenCalled()
    } finally {
      vi.restoreAllMocks()
    }
  })
})
