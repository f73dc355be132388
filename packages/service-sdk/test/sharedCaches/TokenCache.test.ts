import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { ClientCredentials, TokenCache, TokenCacheError, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { credentials, numberedTokens, requestCount, tokenInfo, value } from "../fixtures.js"

const token = tokenInfo("cached-access", 1_000_000, { refreshToken: "cached-refresh", scope: "a b" })

/** A fresh temp directory under os.tmpdir(), removed when the scope closes. */
const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "service-sdk-cache-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

const fileCache = (file: string) => TokenCache.file(file).pipe(Effect.provide(NodeFileSystem.layer))

const readsNone = (file: string) =>
  Effect.gen(function* () {
    const cache = yield* fileCache(file)
    const found = yield* cache.get
    expect(Option.isNone(found)).toBe(true)
  })

describe("TokenCache.memory", () => {
  it.effect("starts empty without an initial value", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      expect(Option.isNone(yield* cache.get)).toBe(true)
    })
  )

  it.effect("starts with the initial value and replaces it on set", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory(token)
      expect(Option.getOrThrow(yield* cache.get)).toBe(token)
      const next = tokenInfo("next", 2)
      yield* cache.set(next)
      expect(Option.getOrThrow(yield* cache.get)).toBe(next)
      expect(cache.withLock).toBeUndefined()
    })
  )

  it.effect("each memory cache is its own", () =>
    Effect.gen(function* () {
      const first = yield* TokenCache.memory()
      const second = yield* TokenCache.memory()
      yield* first.set(token)
      expect(Option.isNone(yield* second.get)).toBe(true)
    })
  )
})

describe("TokenCache.file", () => {
  it.scoped("a missing file reads as none", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* readsNone(path.join(dir, "absent.json"))
      yield* readsNone(path.join(dir, "no", "such", "dir", "token.json"))
    })
  )

  it.scoped("set writes the JSON form atomically with mode 0600, and get reads it back", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "token.json")
      const cache = yield* fileCache(file)
      yield* cache.set(token)
      const text = yield* Effect.promise(() => fs.readFile(file, "utf8"))
      expect(JSON.parse(text)).toEqual({
        access_token: "cached-access",
        expires_at: 1_000_000,
        refresh_token: "cached-refresh",
        scope: "a b",
        // issue 28: the version every write is compared on (readers ignore fields they do not know)
        revision: expect.stringMatching(/^[0-9a-f]{24}$/)
      })
      const stat = yield* Effect.promise(() => fs.stat(file))
      expect(stat.mode & 0o777).toBe(0o600)
      expect(yield* Effect.promise(() => fs.readdir(dir))).toEqual(["token.json"])
      const read = Option.getOrThrow(yield* cache.get)
      expect(value(read.accessToken)).toBe("cached-access")
      expect(read.refreshToken && value(read.refreshToken)).toBe("cached-refresh")
      expect(read.expiresAt).toBe(1_000_000)
      expect(read.scope).toBe("a b")
    })
  )

  it.scoped("set creates missing parent directories", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "a", "b", "c", "token.json")
      const cache = yield* fileCache(file)
      yield* cache.set(token)
      const created = yield* Effect.promise(() => fs.stat(path.join(dir, "a", "b", "c")))
      expect(created.isDirectory()).toBe(true)
      expect(created.mode & 0o077).toBe(0)
      expect(yield* Effect.promise(() => fs.readdir(path.join(dir, "a", "b", "c")))).toEqual(["token.json"])
      expect(Option.isSome(yield* cache.get)).toBe(true)
    })
  )

  it.scoped("overwriting replaces the file, tightens its mode to 0600 and leaves no temp file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "token.json")
      yield* Effect.promise(() => fs.writeFile(file, "old content", { mode: 0o644 }))
      const cache = yield* fileCache(file)
      yield* cache.set(token)
      yield* cache.set(tokenInfo("second", 5))
      const read = Option.getOrThrow(yield* cache.get)
      expect(value(read.accessToken)).toBe("second")
      expect(read.refreshToken).toBeUndefined()
      expect((yield* Effect.promise(() => fs.stat(file))).mode & 0o777).toBe(0o600)
      expect(yield* Effect.promise(() => fs.readdir(dir))).toEqual(["token.json"])
    })
  )

  it.scoped("another cache on the same file (another process) sees what was written", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "shared.json")
      const writer = yield* fileCache(file)
      const reader = yield* fileCache(file)
      expect(Option.isNone(yield* reader.get)).toBe(true)
      yield* writer.set(token)
      expect(value(Option.getOrThrow(yield* reader.get).accessToken)).toBe("cached-access")
    })
  )

  it.scoped("an unreadable path (a directory) reads as none", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "is-a-dir")
      yield* Effect.promise(() => fs.mkdir(file))
      yield* readsNone(file)
    })
  )

  it.scoped.each([
    ["invalid UTF-8 bytes", Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28])],
    ["empty file", Buffer.from("")],
    ["invalid JSON", Buffer.from('{"access_token": "x", ')],
    ["a JSON array", Buffer.from("[1,2,3]")],
    ["JSON null", Buffer.from("null")],
    ["a missing expires_at", Buffer.from('{"access_token":"x"}')],
    ["a numeric access_token", Buffer.from('{"access_token":1,"expires_at":1}')],
    ["camelCase keys", Buffer.from('{"accessToken":"x","expiresAt":1}')]
  ] as const)("a file with %s reads as none", ([, content]) =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "token.json")
      yield* Effect.promise(() => fs.writeFile(file, content))
      yield* readsNone(file)
    })
  )

  it.scoped("ill-typed optional fields in the file read as absent", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "token.json")
      yield* Effect.promise(() =>
        fs.writeFile(file, JSON.stringify({ access_token: "x", expires_at: 9, refresh_token: 42, scope: false }))
      )
      const read = Option.getOrThrow(yield* (yield* fileCache(file)).get)
      expect(value(read.accessToken)).toBe("x")
      expect(read.expiresAt).toBe(9)
      expect(read.refreshToken).toBeUndefined()
      expect(read.scope).toBeUndefined()
    })
  )

  it.scoped("a write under a regular file fails with TokenCacheError naming the path, not the token", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const blocker = path.join(dir, "plain-file")
      yield* Effect.promise(() => fs.writeFile(blocker, "x"))
      const file = path.join(blocker, "sub", "token.json")
      const cache = yield* fileCache(file)
      const error = yield* Effect.flip(cache.set(token))
      expect(error).toBeInstanceOf(TokenCacheError)
      expect(error._tag).toBe("TokenCacheError")
      expect(error.message).toContain(file)
      for (const text of [error.message, String(error), JSON.stringify(error)]) {
        expect(text).not.toContain("cached-access")
        expect(text).not.toContain("cached-refresh")
      }
      expect(Option.isNone(yield* cache.get)).toBe(true)
    })
  )

  it.scoped("a write onto a directory fails with TokenCacheError and removes its temp file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "is-a-dir")
      yield* Effect.promise(() => fs.mkdir(path.join(file, "inner"), { recursive: true }))
      const cache = yield* fileCache(file)
      const error = yield* Effect.flip(cache.set(token))
      expect(error._tag).toBe("TokenCacheError")
      expect(yield* Effect.promise(() => fs.readdir(dir))).toEqual(["is-a-dir"])
    })
  )

  it.scoped("a provider keeps its token in the file, and a new provider on it makes no request", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, "cc.json")
      const run = Effect.gen(function* () {
        const tokenCache = yield* fileCache(file)
        return yield* Effect.gen(function* () {
          const provider = yield* TokenProvider
          const accessToken = yield* provider.getAccessToken
          return { accessToken: value(accessToken), requests: yield* requestCount }
        }).pipe(
          Effect.provide(
            ClientCredentials.layer({ ...credentials, tokenCache }).pipe(
              Layer.provideMerge(MockHttpClient.layer(numberedTokens()))
            )
          )
        )
      })
      expect(yield* run).toEqual({ accessToken: "tok-1", requests: 1 })
      expect(yield* run).toEqual({ accessToken: "tok-1", requests: 0 })
      const stored = Option.getOrThrow(yield* (yield* fileCache(file)).get)
      expect(Redacted.value(stored.accessToken)).toBe("tok-1")
      expect(stored.expiresAt).toBe(3600)
    })
  )
})
