import { describe, expect, it } from "@effect/vitest"
import * as Plain from "@service-sdk/promise"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { join } from "node:path"
import * as Facade from "../../effect4/service-sdk/src/promise.js"

const root = join(import.meta.dirname, "..")

/**
 * Compile-time: what the facade hands out fits the package's plain types (never called). Inputs and option names
 * are checked in `types.test.ts`.
 */
export const facadeFitsPlainTypes = async () => {
  const auth = new Facade.AsyncAuthorizationCode()
  const client = new Facade.AsyncServiceClient()
  const users = new Facade.AsyncUserTokens({ store: Facade.directoryTokenStore("x") })
  const token: Plain.TokenInfo = await auth.exchangeCode("c")
  const pending: Plain.PendingAuthorization = await auth.beginAuthorization()
  const local: Plain.TokenInfo = await Facade.asyncAuthorizeLocal(auth)
  const json: Plain.TokenInfoJson = Facade.tokenInfoToJson(await auth.exchangeCode("c"))
  const cache: Plain.TokenInfo | undefined = await Facade.fileTokenCache("x").get()
  const store: Plain.TokenInfo | undefined = await Facade.directoryTokenStore("x")("u").get()
  const accessToken: string = await users.forUser("u").getAccessToken()
  const results: [Plain.User, Plain.Album, Plain.Paging<Plain.SavedTrack>, Plain.FollowedArtists] = [
    await client.users.me(),
    await client.albums.get("a"),
    await client.library.savedTracks(),
    await client.follows.followedArtists()
  ]
  const playback: Plain.PlaybackState | undefined = await client.player.playbackState()
  const snapshot: Plain.PlaylistSnapshot = await client.playlists.addItems("p", [])
  const retryAfter: Plain.Duration = (null as unknown as Facade.RateLimitError).retryAfter
  // a stub `fetch` fits the plain `fetch` option (Node's own fetch type, where the project has Node's types)
  const stubbed = new Plain.AsyncServiceClient({
    accessToken: "t",
    fetch: async (input: string | URL | Request, init?: RequestInit) => new Response(String(input) + String(init))
  })
  return [token, pending, local, json, cache, store, accessToken, results, playback, snapshot, retryAfter, stubbed]
}

describe("@service-sdk/promise", () => {
  it("exports the facade's own classes and functions (one source)", () => {
    expect(Plain.AsyncClientCredentials).toBe(Facade.AsyncClientCredentials)
    expect(Plain.AsyncAuthorizationCode).toBe(Facade.AsyncAuthorizationCode)
    expect(Plain.AsyncServiceClient).toBe(Facade.AsyncServiceClient)
    expect(Plain.AsyncUserTokens).toBe(Facade.AsyncUserTokens)
    expect(Plain.fileTokenCache).toBe(Facade.fileTokenCache)
    expect(Plain.directoryTokenStore).toBe(Facade.directoryTokenStore)
    expect(Plain.ConfigurationError).toBe(Facade.ConfigurationError)
    expect(Plain.ServiceError).toBe(Facade.ServiceError)
    // plain JS may pass anything
    expect(() => Reflect.construct(Plain.AsyncClientCredentials, [null])).toThrow(Plain.ConfigurationError)
  })

  it("has no dependencies and no peers", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    expect(manifest.dependencies).toEqual({})
    expect(manifest.peerDependencies).toBeUndefined()
    expect(manifest.optionalDependencies).toBeUndefined()
    expect(manifest.engines).toEqual({ node: ">=20" })
    expect(manifest.sideEffects).toBe(false)
  })

  it("ships .d.ts that mention no Effect type and import nothing", () => {
    const types = readFileSync(join(root, "dist", "index.d.ts"), "utf8")
    expect(types).not.toMatch(/\bimport\b|from "|effect\/|Redacted|Layer<|Effect</)
    expect(types).toMatch(/export declare const fileTokenCache/)
    expect(readFileSync(join(root, "dist", "index.d.cts"), "utf8")).toBe(types)
  })

  it("bundles everything: the built module loads only Node's built-in modules (and the app's ioredis, on use)", () => {
    const bundle = readFileSync(join(root, "dist", "index.cjs"), "utf8")
    const loaded = [...bundle.matchAll(/(?:require|import)\("([^"]+)"\)/g)].map((match) => match[1]!)
    expect(loaded.length).toBeGreaterThan(0)
    // ioredis is the app's own, required only when a Redis cache connects with a `url`
    expect(loaded.filter((name) => !builtinModules.includes(name.replace(/^node:/, "")))).toEqual(["ioredis"])
  })

  it("pages and Workers get dist/browser.js (workerd, worker, browser conditions), Node its own entries", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    const entry = manifest.exports["."]
    const browser = { types: "./dist/index.d.ts", default: "./dist/browser.js" }
    // the first condition a resolver matches wins: the browser ones come before import and require, and before this
    // repository's `source` (a page checked with `browser` and `source` gets the browser types, not Node's sources)
    expect(Object.keys(entry)).toEqual(["workerd", "worker", "browser", "source", "import", "require"])
    expect([entry.workerd, entry.worker, entry.browser]).toEqual([browser, browser, browser])
    expect(entry.import).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" })
    expect(entry.require).toEqual({ types: "./dist/index.d.cts", default: "./dist/index.cjs" })
    expect(manifest.files).toEqual(expect.arrayContaining(["dist/browser.js", "dist/browser.js.map"]))
  })

  it("dist/browser.js: an ES module with the Node entry's exports and no Node built-in", () => {
    const code = readFileSync(join(root, "dist", "browser.js"), "utf8")
    expect(code).not.toMatch(/createRequire|\brequire\(|\bfrom\s*"node:|import\("node:/)
    // a plain ES module with no import at all: Node loads it too
    expect(code).not.toMatch(/^import\b|[;}\n]import\s*[{*"]/m)
    // loaded by Node itself (a plain ES module with no import: it loads anywhere), beside the Node entry
    const script = `
      const browser = await import(${JSON.stringify(join(root, "dist", "browser.js"))})
      const node = (await import("node:module")).createRequire(import.meta.url)(${JSON.stringify(join(root, "dist", "index.cjs"))})
      const message = async (f) => { try { await f(); return "no error" } catch (e) { return e.name + ": " + e.message } }
      console.log(JSON.stringify({
        browser: Object.keys(browser).sort(),
        node: Object.keys(node).sort(),
        file: await message(() => browser.fileTokenCache("/tmp/service-sdk-x/tokens.json")),
        redis: await message(() => browser.RedisTokenCache.connect({ url: "redis://127.0.0.1:6379", key: "k" }))
      }))`
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    const loaded = JSON.parse(output) as Record<string, ReadonlyArray<string> | string>
    expect(loaded.browser).toEqual(loaded.node)
    // outside a page and a Worker, what needs Node says it is the browser bundle's
    expect(loaded.file).toMatch(/^ConfigurationError: fileTokenCache: there is no file system in a browser page/)
    expect(loaded.redis).toMatch(/^ConfigurationError: RedisTokenCache: a browser page cannot open a Redis connection/)
  })

  it("THIRD_PARTY_NOTICES covers what dist/browser.js embeds too (its source map names each package)", () => {
    const map = JSON.parse(readFileSync(join(root, "dist", "browser.js.map"), "utf8")) as {
      readonly sources: ReadonlyArray<string>
    }
    const embedded = [
      ...new Set(
        map.sources.flatMap((source) => {
          const found = /^((?:@[^/]+\/)?[^/@]+)@([^/]+)\//.exec(source)
          return found === null ? [] : [`${found[1]} ${found[2]}`]
        })
      )
    ]
    expect(embedded.some((pkg) => pkg.startsWith("effect "))).toBe(true)
    const notices = readFileSync(join(root, "dist", "THIRD_PARTY_NOTICES"), "utf8")
    for (const pkg of embedded) expect(notices, pkg).toContain(`\n${pkg} (`)
  })
})
