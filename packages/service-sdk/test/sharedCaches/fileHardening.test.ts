/**
 * Issue 42, the file and directory caches (DESIGN.md section 9, "Locks" and "Tokens"): a holder that lost its lock
 * while paused never acts on what it read under it (items 3 and 19), an entry a reader would not read back is refused
 * when written (item 4), a symlinked cache directory is judged where it resolves (item 10), a file system without
 * hard links still lets a user sign out (item 12), and a shared directory such as /tmp is never advised a chmod
 * (item 14). The Effect 4 line has the same tests (`packages/effect4/service-sdk/test/sharedCaches/fileHardening.test.ts`).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { join } from "node:path"
import { AuthorizationCode, ConfigurationError, TokenCache, TokenCacheError, TokenStore } from "@service-sdk/effect"
import { directoryTokenStore, fileTokenCache } from "@service-sdk/effect/promise"
import { authorizationCodeLayer, expectTokenRequests, numberedTokens, value } from "../fixtures.js"
import { accessOf, delayedFileSystem, fileCache, tempDir, tokenInfo } from "./support.js"

/** The Node file system whose `link` fails as on a FAT, SMB or FUSE mount: EPERM. */
const noHardLinks = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (real) => ({
    ...real,
    link: (from: string) =>
      Effect.fail(
        new PlatformError.SystemError({
          module: "FileSystem",
          method: "link",
          reason: "PermissionDenied",
          description: "EPERM: operation not permitted, link",
          pathOrDescriptor: from,
          cause: Object.assign(new Error("EPERM: operation not permitted"), { code: "EPERM" })
        })
      )
  }))
).pipe(Layer.provide(NodeFileSystem.layer))

const stored = (access: string, refresh = "refresh-1", expiresAt = 1e10) =>
  JSON.stringify({ access_token: access, expires_at: expiresAt, refresh_token: refresh })

// at once: each waits out real lock TTLs and pauses of seconds, on files of its own
describe.concurrent("a holder that lost its lock while paused never acts on what it read under it", () => {
  it.live("paused past the TTL (its heartbeat too): another process takes over, and its read fails", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      writeFileSync(path, stored("old"), { mode: 0o600 })
      const options = { lockTtl: "400 millis", lockWait: "10 seconds" } as const
      // this process is paused under the lock: its first step there (the sweep) and every heartbeat stall
      const paused = yield* TokenCache.file(path, options).pipe(
        Effect.provide(delayedFileSystem({ readDirectory: 4000, utimes: 15_000 }))
      )
      const other = yield* fileCache(path, options)
      let sent = false
      let otherHeld = false
      const holder = yield* Effect.fork(
        paused.withLock!(
          Effect.flatMap(paused.get, () =>
            Effect.sync(() => {
              // what a renewal does next: send the refresh token it read
              sent = true
            })
          )
        )
      )
      yield* Effect.sleep("200 millis")
      yield* other.withLock!(Effect.sync(() => (otherHeld = true)))
      const error = yield* Effect.flip(Fiber.join(holder))
      expect(otherHeld).toBe(true)
      expect(error._tag).toBe("TokenCacheError")
      expect(error.message).toContain("lost the token lock file")
      expect(sent).toBe(false)
    })
  )

  it.live(
    "through a provider: the paused holder's renewal sends no refresh token; the next call serves the other's",
    () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        writeFileSync(path, stored("stale-access", "refresh-1", 1), { mode: 0o600 })
        const options = { lockTtl: "400 millis", lockWait: "10 seconds" } as const
        // this process is paused under the lock: its first step there (the sweep) and every heartbeat stall
        const paused = yield* TokenCache.file(path, options).pipe(
          Effect.provide(delayedFileSystem({ readDirectory: 4000, utimes: 15_000 }))
        )
        const other = yield* fileCache(path, options)
        yield* Effect.gen(function* () {
          const provider = yield* AuthorizationCode
          const call = yield* Effect.fork(Effect.either(provider.getAccessToken))
          yield* Effect.sleep("200 millis")
          // the other process renews meanwhile (it takes the lock once the paused holder's TTL passed)
          yield* other.withLock!(
            Effect.flatMap(other.get, (found) =>
              other.compareAndSet!(found, tokenInfo("other-access", 1e10, { refreshToken: "refresh-2" }))
            )
          )
          const first = yield* Fiber.join(call)
          expect(first._tag).toBe("Left")
          yield* expectTokenRequests(0)
          // paused no more: the next call serves the other process's token, still without a request
          expect(value(yield* provider.getAccessToken)).toBe("other-access")
          yield* expectTokenRequests(0)
        }).pipe(Effect.provide(authorizationCodeLayer(numberedTokens(), { tokenCache: paused })))
      })
  )

  it.live("a live holder keeps its lock while it works past its TTL: no one else holds it meanwhile", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const options = { lockTtl: "3 seconds", lockWait: "30 seconds" } as const
      const first = yield* fileCache(path, options)
      const second = yield* fileCache(path, options)
      const events: Array<string> = []
      const holder = yield* Effect.fork(
        first.withLock!(
          Effect.zipRight(
            Effect.flatMap(first.get, () => Effect.sleep("4500 millis")),
            Effect.sync(() => events.push("first done"))
          )
        )
      )
      yield* Effect.sleep("100 millis")
      yield* second.withLock!(Effect.sync(() => events.push("second in")))
      yield* Fiber.join(holder)
      expect(events).toEqual(["first done", "second in"])
    })
  )
})

describe("an entry a reader would not read back is refused when written", () => {
  it.live("over 1 MiB: TokenCacheError, and the previous entry is kept", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const cache = yield* fileCache(path)
      yield* cache.set(tokenInfo("kept", 1e10, { refreshToken: "r" }))
      const huge = tokenInfo("x".repeat(1 << 20), 1e10, { refreshToken: "r2" })
      const error = yield* Effect.flip(cache.set(huge))
      expect(error._tag).toBe("TokenCacheError")
      expect(error.message).toContain("1 MiB")
      const refused = yield* Effect.flip(cache.compareAndSet!(Option.none(), huge))
      expect(refused._tag).toBe("TokenCacheError")
      expect(accessOf(yield* cache.get)).toEqual(Option.some("kept"))
    })
  )

  it.live("just under the limit: written and read back (the limit is the reader's)", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const cache = yield* fileCache(path)
      const access = "y".repeat((1 << 20) - 400)
      yield* cache.set(tokenInfo(access, 1e10, { refreshToken: "r" }))
      expect(accessOf(yield* cache.get)).toEqual(Option.some(access))
    })
  )
})

describe("a cache directory is judged where its path resolves", () => {
  it.live("a link to a world-writable directory is refused (file and directory caches), with no chmod advice", () =>
    Effect.gen(function* () {
      const root = tempDir()
      const open = join(root, "open")
      mkdirSync(open)
      chmodSync(open, 0o777)
      const link = join(root, "link")
      symlinkSync(open, link)
      const cache = yield* fileCache(join(link, "tokens.json"))
      const error = yield* Effect.flip(cache.set(tokenInfo("a", 1e10, { refreshToken: "r" })))
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).toContain(`resolves to ${open}`)
      expect(error.message).not.toContain("chmod 700")
      expect(readdirSync(open)).toEqual([])
      const store = yield* TokenStore.directory(link).pipe(Effect.provide(NodeFileSystem.layer))
      const refused = yield* Effect.flip(store("someone").set(tokenInfo("a", 1e10)))
      expect(refused._tag).toBe("ConfigurationError")
      expect(readdirSync(open)).toEqual([])
    })
  )

  it.live("a link to a private directory of ours is used", () =>
    Effect.gen(function* () {
      const root = tempDir()
      const mine = join(root, "mine")
      mkdirSync(mine, { mode: 0o700 })
      symlinkSync(mine, join(root, "link"))
      const cache = yield* fileCache(join(root, "link", "tokens.json"))
      yield* cache.set(tokenInfo("a", 1e10))
      expect(accessOf(yield* cache.get)).toEqual(Option.some("a"))
      expect(existsSync(join(mine, "tokens.json"))).toBe(true)
    })
  )
})

describe("a shared directory (sticky, as /tmp) is never advised a chmod", () => {
  it.live("a sticky world-writable directory: a private directory is advised instead", () =>
    Effect.gen(function* () {
      const shared = join(tempDir(), "shared")
      mkdirSync(shared)
      chmodSync(shared, 0o1777)
      const cache = yield* fileCache(join(shared, "x.json"))
      const error = yield* Effect.flip(cache.get)
      expect(error._tag).toBe("ConfigurationError")
      expect(error.message).not.toContain("chmod 700")
      expect(error.message).toContain("private directory")
    })
  )

  it.live.skipIf((statSync("/tmp").mode & 0o1022) !== 0o1022)(
    'TokenCache.file("/tmp/x.json") does not say "chmod 700 /tmp"',
    () =>
      Effect.gen(function* () {
        const cache = yield* fileCache("/tmp/x.json")
        const error = yield* Effect.flip(cache.get)
        expect(error.message).not.toContain("chmod 700 /tmp")
        expect(error.message).toContain("private directory")
      })
  )
})

describe("a file system without hard links (link: EPERM)", () => {
  it.live("writes fail with a TokenCacheError that says why; a sign-out still removes the refresh token", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      writeFileSync(path, stored("old", "refresh-secret"), { mode: 0o600 })
      const cache = yield* TokenCache.file(path).pipe(Effect.provide(noHardLinks))
      const error = yield* Effect.flip(cache.set(tokenInfo("new", 1e10, { refreshToken: "r" })))
      expect(error._tag).toBe("TokenCacheError")
      expect(error.message).toContain("hard links")
      expect(error.message).toContain("Signing out still removes the token")
      // a renewal under the lock fails before it could send the refresh token it read
      const renewal = yield* Effect.flip(cache.withLock!(cache.get))
      expect(renewal.message).toContain("hard links")
      expect(readFileSync(path, "utf8")).toContain("refresh-secret")
      // the sign-out (what UserTokens.signOut runs: clear under withLock) leaves nothing behind
      yield* cache.withLock!(cache.clear!)
      expect(existsSync(path)).toBe(false)
      expect(readdirSync(dir)).toEqual([])
    })
  )

  it.live("clear without the lock removes the entry too", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      writeFileSync(path, stored("old"), { mode: 0o600 })
      const cache = yield* TokenCache.file(path).pipe(Effect.provide(noHardLinks))
      yield* cache.clear!
      expect(readdirSync(dir)).toEqual([])
    })
  )
})

describe("the plain-code caches share these rules (fileTokenCache, directoryTokenStore)", () => {
  it("an entry over 1 MiB is refused with TokenCacheError; a symlinked open directory with ConfigurationError", async () => {
    const root = tempDir()
    const cache = fileTokenCache(join(root, "tokens.json"))
    await cache.set(tokenInfo("kept", 1e10, { refreshToken: "r" }))
    const refused = await cache.set(tokenInfo("x".repeat(1 << 20), 1e10)).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(refused).toBeInstanceOf(TokenCacheError)
    expect((await cache.get())?.accessToken).toBeDefined()
    const open = join(root, "open")
    mkdirSync(open)
    chmodSync(open, 0o777)
    symlinkSync(open, join(root, "link"))
    const store = directoryTokenStore(join(root, "link"))
    const error = await store("someone")
      .set(tokenInfo("a", 1e10))
      .then(
        () => undefined,
        (cause: unknown) => cause
      )
    expect(error).toBeInstanceOf(ConfigurationError)
    expect(readdirSync(open)).toEqual([])
  })
})
