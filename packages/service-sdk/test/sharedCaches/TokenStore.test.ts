import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Option } from "effect"
import { TokenCache, TokenStore } from "@service-sdk/effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { tokenInfo, value } from "../fixtures.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "service-sdk-store-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const accessOf = (cache: TokenCache.TokenCache) =>
  Effect.map(cache.get, (found) => Option.map(found, (token) => value(token.accessToken)))

describe("TokenCache.clear", () => {
  it.effect("memory: clear forgets the entry, set works again after", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory(tokenInfo("a", 10))
      yield* cache.clear!
      expect(Option.isNone(yield* cache.get)).toBe(true)
      yield* cache.set(tokenInfo("b", 10))
      expect(yield* accessOf(cache)).toEqual(Option.some("b"))
    })
  )

  it.scoped("file: clear removes the file; clearing a missing file is fine", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "token.json")
      const cache = yield* TokenCache.file(file)
      yield* cache.clear!
      yield* cache.set(tokenInfo("a", 10))
      expect(fs.existsSync(file)).toBe(true)
      yield* cache.clear!
      expect(fs.existsSync(file)).toBe(false)
      expect(Option.isNone(yield* cache.get)).toBe(true)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("file: a clear that cannot remove is a TokenCacheError", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "token.json")
      fs.mkdirSync(path.join(file, "inside"), { recursive: true }) // a non-empty directory in the way
      const cache = yield* TokenCache.file(file)
      const error = yield* Effect.flip(cache.clear!)
      expect(error._tag).toBe("TokenCacheError")
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})

describe("TokenStore.memory", () => {
  it.effect("each user has their own entry; clear forgets one user only", () =>
    Effect.gen(function* () {
      const store = yield* TokenStore.memory()
      yield* store("alice").set(tokenInfo("alice-token", 10))
      yield* store("bob").set(tokenInfo("bob-token", 10))
      expect(yield* accessOf(store("alice"))).toEqual(Option.some("alice-token"))
      expect(yield* accessOf(store("bob"))).toEqual(Option.some("bob-token"))
      expect(Option.isNone(yield* store("carol").get)).toBe(true)
      yield* store("alice").clear!
      expect(Option.isNone(yield* store("alice").get)).toBe(true)
      expect(yield* accessOf(store("bob"))).toEqual(Option.some("bob-token"))
    })
  )

  it.effect("two memory stores are separate", () =>
    Effect.gen(function* () {
      const first = yield* TokenStore.memory()
      const second = yield* TokenStore.memory()
      yield* first("alice").set(tokenInfo("a", 10))
      expect(Option.isNone(yield* second("alice").get)).toBe(true)
    })
  )
})

describe("TokenStore.directory", () => {
  it.scoped("one 0600 file per user in a 0700 directory, read back through a new store", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const dir = path.join(root, "users")
      const store = yield* TokenStore.directory(dir)
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      yield* store("alice").set(tokenInfo("alice-token", 10, { refreshToken: "alice-refresh" }))
      yield* store("bob").set(tokenInfo("bob-token", 10))
      const files = fs.readdirSync(dir).sort()
      expect(files).toEqual([TokenStore.fileName("alice"), TokenStore.fileName("bob")].sort())
      for (const file of files) expect(fs.statSync(path.join(dir, file)).mode & 0o777).toBe(0o600)
      const again = yield* TokenStore.directory(dir)
      expect(yield* accessOf(again("alice"))).toEqual(Option.some("alice-token"))
      expect(yield* accessOf(again("bob"))).toEqual(Option.some("bob-token"))
      yield* again("alice").clear!
      expect(fs.readdirSync(dir)).toEqual([TokenStore.fileName("bob")])
      expect(Option.isNone(yield* store("alice").get)).toBe(true)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("hostile ids stay inside the directory and apart", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const dir = path.join(root, "users")
      const store = yield* TokenStore.directory(dir)
      const ids = [
        "../x",
        "a/b",
        ".",
        "..",
        "",
        "x".repeat(65_536),
        "ünïcødé",
        "a\u0000b",
        "/etc/passwd",
        "A",
        "a",
        "\ud800",
        "\udc00"
      ]
      for (const [i, id] of ids.entries()) yield* store(id).set(tokenInfo(`token-${i}`, 10))
      expect(fs.readdirSync(root)).toEqual(["users"])
      expect(fs.readdirSync(dir).length).toBe(ids.length)
      for (const [i, id] of ids.entries()) expect(yield* accessOf(store(id))).toEqual(Option.some(`token-${i}`))
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.prop(
    "file names are one plain path segment, and distinct ids give distinct names",
    [
      fc.string({ unit: "binary" }),
      fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: fc.constantFrom("\ud800", "\udc00", "a") }))
    ],
    ([first, second]) => {
      for (const id of [first, second]) {
        const name = TokenStore.fileName(id)
        expect(name).toMatch(/^[0-9a-f]{64}\.json$/)
        expect(path.resolve("/store", name)).toBe(`/store/${name}`)
      }
      expect(TokenStore.fileName(first) === TokenStore.fileName(second)).toBe(first === second)
    }
  )
})
