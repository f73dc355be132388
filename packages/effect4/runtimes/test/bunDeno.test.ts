/**
 * Bun and Deno against the emulator: the built `@service-sdk/promise` (client credentials, a typed resource, the
 * single flight, the file cache) and the Effect 4 line's first example with FetchHttpClient (bundled by esbuild).
 * Each fixture runs as its own process and prints one JSON line.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningEmulator } from "../../service-sdk/test/support/emulator.js"
import {
  bun,
  bundle,
  deno,
  fixtures,
  node,
  promiseEntry,
  type Runtime,
  runFixture,
  runFixtureWithOutput,
  skipWhenMissing,
  startEmulatorPatiently
} from "./support/runtimes.js"

let emulator: RunningEmulator
let dir: string
let effect4Bundle: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "service-sdk-runtimes-"))
  effect4Bundle = join(dir, "effect4.mjs")
  const [started] = await Promise.all([
    startEmulatorPatiently(),
    bundle(join(fixtures, "effect4.ts"), effect4Bundle, "node")
  ])
  emulator = started
})

afterAll(async () => {
  await emulator?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const env = () => ({
  SERVICE_SDK_AUTH_URL: emulator.authUrl,
  SERVICE_SDK_API_URL: emulator.apiUrl,
  SERVICE_SDK_CLIENT_ID: emulator.clientId,
  SERVICE_SDK_CLIENT_SECRET: emulator.clientSecret,
  PROMISE_ENTRY: promiseEntry
})

const tokenRequests = async () => (await emulator.stats()).tokenRequests.client_credentials ?? 0

/** A fresh directory of our own (0700) for a file cache. */
const cacheDir = (name: string) => {
  const path = mkdtempSync(join(dir, `${name}-`))
  return path
}

const suite = (runtime: Runtime) =>
  describe(`${runtime.name}`, () => {
    if (skipWhenMissing(runtime.name, runtime.missing)) return

    it("@service-sdk/promise: 100 concurrent callers make one token request; a typed resource", async () => {
      const before = await tokenRequests()
      const result = await runFixture(runtime, join(fixtures, "promise.mjs"), ["basic"], env())
      expect(result).toEqual({ callers: 100, distinct: 1, album: "Loopback Sessions", tracks: expect.any(Number) })
      expect(result.tracks).toBeGreaterThan(0)
      expect((await tokenRequests()) - before).toBe(1)
    })

    it("@service-sdk/promise: fileTokenCache keeps the token (0600) for the next process", async () => {
      const file = join(cacheDir(`${runtime.name}-promise`), "tokens.json")
      const before = await tokenRequests()
      const first = await runFixture(runtime, join(fixtures, "promise.mjs"), ["file"], { ...env(), TOKEN_FILE: file })
      expect(first).toEqual({ distinct: 1, digest: expect.stringMatching(/^[0-9a-f]{64}$/) })
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const second = await runFixture(runtime, join(fixtures, "promise.mjs"), ["file"], { ...env(), TOKEN_FILE: file })
      expect(second).toEqual(first)
      expect((await tokenRequests()) - before).toBe(1)
    })

    it("@service-sdk/promise: a file cache in a directory others can write is never written; the token still comes", async () => {
      // as on Node: /tmp (shared, sticky) is refused as a cache directory, the provider renews in its own process
      // and warns, naming the directory
      const file = join(tmpdir(), `service-sdk-runtimes-${runtime.name}-${process.pid}.json`)
      const { result, stderr } = await runFixtureWithOutput(runtime, join(fixtures, "promise.mjs"), ["file"], {
        ...env(),
        TOKEN_FILE: file
      })
      expect(result).toEqual({ distinct: 1, digest: expect.stringMatching(/^[0-9a-f]{64}$/) })
      expect(existsSync(file)).toBe(false)
      expect(stderr).toContain(`cannot use the token cache directory ${tmpdir()}`)
    })

    it("Effect 4 line: the README's first example with FetchHttpClient", async () => {
      const before = await tokenRequests()
      expect(await runFixture(runtime, effect4Bundle, [], env())).toEqual({ album: "Loopback Sessions" })
      expect((await tokenRequests()) - before).toBe(1)
    })

    it("Effect 4 line: TokenCache.file keeps the token for the next process", async () => {
      const file = join(cacheDir(`${runtime.name}-effect4`), "tokens.json")
      const before = await tokenRequests()
      for (let run = 0; run < 2; run++) {
        expect(await runFixture(runtime, effect4Bundle, [], { ...env(), TOKEN_FILE: file })).toEqual({
          album: "Loopback Sessions"
        })
      }
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect((await tokenRequests()) - before).toBe(1)
    })
  })

suite(bun)
suite(deno)

describe("Bun, Deno and Node on one token file", () => {
  if (skipWhenMissing("bun and deno", bun.missing ?? deno.missing)) return

  it("three processes at once, one per runtime, make one token request and share its token", async () => {
    const file = join(cacheDir("mixed"), "tokens.json")
    const before = await tokenRequests()
    const results = await Promise.all(
      [bun, deno, node].map((runtime) =>
        runFixture(runtime, join(fixtures, "promise.mjs"), ["file"], { ...env(), TOKEN_FILE: file })
      )
    )
    expect(new Set(results.map((result) => result.digest)).size).toBe(1)
    expect((await tokenRequests()) - before).toBe(1)
  })
})
