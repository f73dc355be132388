/**
 * Issue 28: what another user or a crash leaves beside a token file. Hostile lock files are stale, never waited on
 * for good; files are opened without following links or blocking; a directory or file that another user can write
 * or owns is a ConfigurationError naming it and the fix; temp files are swept; a sign-out leaves no copy of a refresh
 * token; an empty or root path is a ConfigurationError.
 */
import { execFileSync } from "node:child_process"
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AuthorizationCode, ClientCredentials, TokenCache, TokenStore } from "@service-sdk/effect"
import { directoryTokenStore, fileTokenCache } from "@service-sdk/effect/promise"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, tokenResponse } from "../fixtures.js"
import { accessOf, asNobody, fileCache, isRoot, runs, tempDir, tokenInfo } from "./support.js"

const mkfifo = (path: string) => execFileSync("mkfifo", ["-m", "600", path])

describe("hostile lock files are stale, never waited on for good", () => {
  const cases: ReadonlyArray<readonly [string, (lock: string) => void]> = [
    [
      "a TTL of 1e308, not kept alive for 6 minutes (a claimed TTL is honoured up to 5 minutes)",
      (lock) => {
        writeFileSync(lock, JSON.stringify({ owner: "x", pid: process.pid, host: "h", ttl: 1e308 }))
        const before = new Date(Date.now() - 6 * 60_000)
        utimesSync(lock, before, before)
      }
    ],
    [
      "an mtime a day ahead",
      (lock) => {
        writeFileSync(lock, JSON.stringify({ owner: "x", pid: process.pid, host: "h", ttl: 1000 }))
        const ahead = new Date(Date.now() + 86_400_000)
        utimesSync(lock, ahead, ahead)
      }
    ],
    ["a dangling symbolic link", (lock) => symlinkSync(join(lock, "..", "nowhere"), lock)],
    [
      "a directory",
      (lock) => {
        mkdirSync(lock)
        writeFileSync(join(lock, "inside"), "x")
      }
    ],
    ["a FIFO", (lock) => mkfifo(lock)]
  ]
  for (const [name, plant] of cases) {
    it.live(`${name}: the write goes through within lockWait and the lock is gone after`, () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        const cache = yield* fileCache(path, { lockTtl: "400 millis", lockWait: "4 seconds" })
        const previous = tokenInfo("kept", 100, { refreshToken: "r" })
        yield* cache.set(previous)
        plant(`${path}.lock`)
        expect(yield* cache.compareAndSet!(Option.some(previous), tokenInfo("next", 200))).toBe(true)
        expect(accessOf(yield* cache.get)).toEqual(Option.some("next"))
        expect(existsSync(`${path}.lock`)).toBe(false)
        expect(readdirSync(join(path, "..")).sort()).toEqual(["tokens.json"])
      })
    )
  }

  it.live("a live holder's longer TTL is honoured: not taken over at once by a waiter with a shorter lockTtl", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      // our TTL is 400 ms and the wait 2 s; the holder wrote 2 minutes and is alive (DESIGN section 9, "Locks")
      const cache = yield* fileCache(path, { lockTtl: "400 millis", lockWait: "2 seconds" })
      const previous = tokenInfo("kept", 100, { refreshToken: "r" })
      yield* cache.set(previous)
      const lock = JSON.stringify({ owner: "x", pid: process.pid, host: hostname(), ttl: 120_000 })
      writeFileSync(`${path}.lock`, lock)
      const error = yield* Effect.flip(cache.withLock!(Effect.void))
      expect(error._tag).toBe("TokenCacheError")
      expect(error.message).toContain("gave up waiting")
      expect(readFileSync(`${path}.lock`, "utf8")).toBe(lock)
      // compare-and-set needs no lock to be right: it waits for the lock, then gives up the same way
      expect((yield* Effect.flip(cache.compareAndSet!(Option.some(previous), tokenInfo("next", 200))))._tag).toBe(
        "TokenCacheError"
      )
      expect(accessOf(yield* cache.get)).toEqual(Option.some("kept"))
    })
  )

  it.live("a FIFO as the token file reads as none at once (never hangs) and is refused as an entry to compare", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      mkfifo(path)
      const cache = yield* fileCache(path)
      expect(yield* cache.get).toEqual(Option.none())
      const error = yield* Effect.flip(cache.compareAndSet!(Option.none(), tokenInfo("x", 1)))
      expect(error.message).toContain("FIFO")
    })
  )

  it.live("a symbolic link as the token file is not followed: reads as none, and a write replaces the link", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const target = join(dir, "elsewhere.json")
      writeFileSync(target, JSON.stringify({ access_token: "via-link", expires_at: 1e10 }), { mode: 0o600 })
      const path = join(dir, "tokens.json")
      symlinkSync(target, path)
      const cache = yield* fileCache(path)
      expect(yield* cache.get).toEqual(Option.none())
      yield* cache.set(tokenInfo("mine", 100))
      expect(accessOf(yield* cache.get)).toEqual(Option.some("mine"))
      expect(JSON.parse(readFileSync(target, "utf8")).access_token).toBe("via-link")
    })
  )
})

describe("the directory check the library and the CLI share", () => {
  it("ours or root's and closed: ok; ours and open: tighten (the CLI) or refuse (the library); another's: refuse", () => {
    expect(TokenCache.directoryVerdict({ mode: 0o40700, uid: 1000 }, 1000)).toBe("ok")
    expect(TokenCache.directoryVerdict({ mode: 0o40755, uid: 0 }, 1000)).toBe("ok")
    expect(TokenCache.directoryVerdict({ mode: 0o40770, uid: 1000 }, 1000)).toBe("tighten")
    expect(TokenCache.directoryVerdict({ mode: 0o40700, uid: 1001 }, 1000)).toBe("refuse")
    expect(TokenCache.directoryVerdict({ mode: 0o41777, uid: 1000 }, 1000)).toBe("refuse")
    expect(TokenCache.directoryProblem({ mode: 0o40700, uid: 1001 }, 1000)).toContain("another user")
  })

  it.live("a group-writable directory of our own: every operation is a ConfigurationError naming it and the fix", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      chmodSync(dir, 0o770)
      const cache = yield* fileCache(join(dir, "tokens.json"))
      for (const operation of [
        cache.get,
        cache.set(tokenInfo("x", 1)),
        cache.compareAndSet!(Option.none(), tokenInfo("x", 1)),
        cache.withLock!(Effect.void),
        cache.clear!
      ]) {
        const error = yield* Effect.flip(operation)
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toContain(`chmod 700 ${dir}`)
      }
      expect(readdirSync(dir)).toEqual([])
    })
  )
})

describe.skipIf(!isRoot || !runs("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"]))(
  "files planted by another user (setpriv as uid 65534)",
  () => {
    const provider = (tokenCache: TokenCache.TokenCache) =>
      AuthorizationCode.make({ ...credentials, tokenCache }).pipe(
        Effect.provide(MockHttpClient.layer(() => tokenResponse("legit")))
      )

    it.scoped("a token file planted in a directory others can write: ConfigurationError, never the planted token", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        chmodSync(dir, 0o777)
        const path = join(dir, "tokens.json")
        asNobody(
          `printf '%s' '{"access_token":"ATTACKER-TOKEN-1","expires_at":9999999999,"refresh_token":"x"}' > ${path}`
        )
        const tokens = yield* provider(yield* fileCache(path))
        const error = yield* Effect.flip(tokens.getAccessToken)
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toContain(dir)
        expect(error.message).toContain("chmod 700")
        expect(error.message).not.toContain("ATTACKER")
        // client credentials too: a refused cache is no outage to renew around, it is said
        const client = yield* ClientCredentials.make({ ...credentials, tokenCache: yield* fileCache(path) }).pipe(
          Effect.provide(MockHttpClient.layer(() => tokenResponse("legit")))
        )
        expect((yield* Effect.flip(client.getAccessToken))._tag).toBe("ConfigurationError")
      })
    )

    it.scoped("a token file of another user in our own directory: ConfigurationError naming the file", () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        writeFileSync(path, JSON.stringify({ access_token: "ATTACKER-TOKEN-2", expires_at: 9999999999 }), {
          mode: 0o600
        })
        chownSync(path, 65534, 65534)
        const cache = yield* fileCache(path)
        const error = yield* Effect.flip(cache.get)
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toContain(path)
        const tokens = yield* provider(cache)
        expect((yield* Effect.flip(tokens.getAccessToken))._tag).toBe("ConfigurationError")
      })
    )

    for (const [name, plant] of [
      [
        "a lock file",
        (lock: string) => asNobody(`printf '%s' '{"owner":"x","pid":1,"host":"h","ttl":1000000}' > ${lock}`)
      ],
      ["a FIFO as the lock", (lock: string) => asNobody(`mkfifo ${lock}`)]
    ] as const) {
      it.live(`${name} planted in a shared (sticky) directory: ConfigurationError at once, no wait, no hang`, () =>
        Effect.gen(function* () {
          const dir = tempDir()
          chmodSync(dir, 0o1777)
          const path = join(dir, "tokens.json")
          plant(`${path}.lock`)
          const cache = yield* fileCache(path, { lockWait: "3 seconds" })
          const start = Date.now()
          const error = yield* Effect.flip(cache.withLock!(Effect.void))
          expect(error._tag).toBe("ConfigurationError")
          expect(error.message).toContain(dir)
          expect(Date.now() - start).toBeLessThan(2500)
        })
      )
    }

    it.live("TokenStore.directory in a directory others can write: ConfigurationError at the first use", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        chmodSync(dir, 0o777)
        const store = yield* TokenStore.directory(dir).pipe(Effect.provide(NodeFileSystem.layer))
        const error = yield* Effect.flip(store("alice").get)
        expect(error._tag).toBe("ConfigurationError")
        expect(error.message).toContain(dir)
      })
    )
  }
)

describe("leftovers: temp files swept, a sign-out leaves no copy of a refresh token", () => {
  const leftovers = (dir: string) => {
    const old = new Date(Date.now() - 3_600_000)
    const temp = join(dir, "tokens.json.0badc0de-1-abcdef.tmp")
    writeFileSync(temp, JSON.stringify({ access_token: "a", expires_at: 1, refresh_token: "CANARY-RT" }), {
      mode: 0o600
    })
    utimesSync(temp, old, old)
    const staged = join(dir, "tokens.json.0badc0de-2-abcdef.tmpdir")
    mkdirSync(staged)
    writeFileSync(join(staged, "entry"), JSON.stringify({ access_token: "b", refresh_token: "CANARY-RT" }))
    utimesSync(staged, old, old)
    const claim = join(dir, "tokens.json.claim-rdeadbeefdeadbeef-0")
    writeFileSync(claim, JSON.stringify({ kind: "replace", staged: "tokens.json.0badc0de-1-abcdef.tmp" }))
  }
  const canaries = (dir: string): ReadonlyArray<string> =>
    (readdirSync(dir, { recursive: true }) as Array<string>).filter((name) => {
      try {
        return readFileSync(join(dir, name), "utf8").includes("CANARY-RT")
      } catch {
        return false
      }
    })

  it.live("a crash's temp files and claims are swept when the lock is taken", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      const cache = yield* fileCache(path, { lockTtl: "2 seconds" })
      yield* cache.set(tokenInfo("current", 100, { refreshToken: "r" }))
      leftovers(dir)
      yield* cache.withLock!(Effect.void)
      expect(readdirSync(dir)).toEqual(["tokens.json"])
    })
  )

  it.live("a claim of the current version left by a killed writer: the entry is written again, the claim swept", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      const cache = yield* fileCache(path)
      yield* cache.set(tokenInfo("current", 100, { refreshToken: "r" }))
      const before = JSON.parse(readFileSync(path, "utf8")) as { revision: string }
      // a writer of another process claimed the current version, then died before it acted (its change is gone)
      writeFileSync(
        join(dir, `tokens.json.claim-r${before.revision}-0`),
        JSON.stringify({ kind: "replace", staged: "tokens.json.0badc0de-1-abcdef.tmp", pid: 1, host: "h", ttl: 1000 })
      )
      yield* cache.withLock!(Effect.void)
      expect(readdirSync(dir)).toEqual(["tokens.json"])
      const after = JSON.parse(readFileSync(path, "utf8")) as { access_token: string; revision: string }
      expect(after.access_token).toBe("current")
      expect(after.revision).not.toBe(before.revision)
      expect(
        yield* cache.compareAndSet!(Option.some(tokenInfo("current", 1, { refreshToken: "r" })), tokenInfo("next", 2))
      ).toBe(true)
    })
  )

  it.live("a sign-out (clear) removes the entry and every temp file of it, fresh ones too", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      const cache = yield* fileCache(path)
      yield* cache.set(tokenInfo("current", 100, { refreshToken: "CANARY-RT" }))
      leftovers(dir)
      writeFileSync(join(dir, "tokens.json.0badc0de-3-abcdef.tmp"), "CANARY-RT fresh")
      yield* cache.clear!
      expect(yield* cache.get).toEqual(Option.none())
      expect(canaries(dir)).toEqual([])
    })
  )
})

describe("paths that name no place are a ConfigurationError", () => {
  it.effect("TokenStore.directory and TokenCache.file: empty, blank, the root", () =>
    Effect.gen(function* () {
      for (const path of ["", "   ", "/", "//", "/.."]) {
        const store = yield* Effect.exit(TokenStore.directory(path).pipe(Effect.provide(NodeFileSystem.layer)))
        expect(store._tag === "Failure" && JSON.stringify(store.cause)).toContain("ConfigurationError")
      }
      for (const path of ["", " ", "/", "dir/", "."]) {
        const file = yield* Effect.exit(TokenCache.file(path).pipe(Effect.provide(NodeFileSystem.layer)))
        expect(file._tag === "Failure" && JSON.stringify(file.cause)).toContain("ConfigurationError")
      }
    })
  )

  it("the plain-code caches throw it at once", () => {
    for (const make of [() => fileTokenCache(""), () => directoryTokenStore("/"), () => directoryTokenStore("")]) {
      expect(make).toThrow(expect.objectContaining({ _tag: "ConfigurationError" }))
    }
  })
})
