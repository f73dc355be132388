/**
 * Issue 28's edge cases of the file caches, on this line (the protocol is the shared one, `packages/shared/src`:
 * these tests run it through this line's interpreter on `node:fs`). Hostile lock files are stale, never waited on
 * for good; files are opened without following links or blocking; a directory or file another user can write or
 * owns is a ConfigurationError naming it and the fix; temp files and claims are swept; a sign-out leaves no copy of
 * a refresh token; an empty or root path is a ConfigurationError.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFileSync, spawnSync } from "node:child_process"
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { AuthorizationCode, TokenCache, TokenInfo, TokenStore } from "@service-sdk/effect"
import { credentials, issuing, mock } from "../support/mock.js"

const tempDir = () => mkdtempSync(join(tmpdir(), "e4-edges-"))
const token = (access: string, expiresAt: number, refresh?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(access),
    expiresAt,
    ...(refresh !== undefined ? { refreshToken: Redacted.make(refresh) } : {})
  })
const accessOf = (found: Option.Option<TokenInfo>) => Option.map(found, (t) => Redacted.value(t.accessToken))
const mkfifo = (path: string) => execFileSync("mkfifo", ["-m", "600", path])
const isRoot = process.getuid?.() === 0
const runs = (command: string, args: ReadonlyArray<string>) =>
  spawnSync(command, args, { stdio: "ignore", timeout: 10_000 }).status === 0
const asNobody = (script: string) =>
  execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c", script], {
    stdio: "pipe"
  })

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
        const cache = yield* TokenCache.file(path, { lockTtl: "400 millis", lockWait: "4 seconds" })
        const previous = token("kept", 100, "r")
        yield* cache.set(previous)
        plant(`${path}.lock`)
        assert.isTrue(yield* cache.compareAndSet!(Option.some(previous), token("next", 200)))
        assert.deepStrictEqual(accessOf(yield* cache.get), Option.some("next"))
        assert.isFalse(existsSync(`${path}.lock`))
        assert.deepStrictEqual(readdirSync(join(path, "..")), ["tokens.json"])
      })
    )
  }

  it.live("a live holder's longer TTL is honoured: not taken over at once by a waiter with a shorter lockTtl", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      // our TTL is 400 ms and the wait 2 s; the holder wrote 2 minutes and is alive (DESIGN section 9, "Locks")
      const cache = yield* TokenCache.file(path, { lockTtl: "400 millis", lockWait: "2 seconds" })
      const previous = token("kept", 100, "r")
      yield* cache.set(previous)
      const lock = JSON.stringify({ owner: "x", pid: process.pid, host: hostname(), ttl: 120_000 })
      writeFileSync(`${path}.lock`, lock)
      const error = yield* Effect.flip(cache.withLock!(Effect.void))
      assert.strictEqual(error._tag, "TokenCacheError")
      assert.include(error.message, "gave up waiting")
      assert.strictEqual(readFileSync(`${path}.lock`, "utf8"), lock)
      assert.deepStrictEqual(accessOf(yield* cache.get), Option.some("kept"))
    })
  )

  it.live("a FIFO as the token file reads as none at once (never hangs) and is refused as an entry to compare", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      mkfifo(path)
      const cache = yield* TokenCache.file(path)
      assert.isTrue(Option.isNone(yield* cache.get))
      const error = yield* Effect.flip(cache.compareAndSet!(Option.none(), token("x", 1)))
      assert.include(error.message, "FIFO")
    })
  )

  it.live("a symbolic link as the token file is not followed: reads as none, and a write replaces the link", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const target = join(dir, "elsewhere.json")
      writeFileSync(target, JSON.stringify({ access_token: "via-link", expires_at: 1e10 }), { mode: 0o600 })
      const path = join(dir, "tokens.json")
      symlinkSync(target, path)
      const cache = yield* TokenCache.file(path)
      assert.isTrue(Option.isNone(yield* cache.get))
      yield* cache.set(token("mine", 100))
      assert.deepStrictEqual(accessOf(yield* cache.get), Option.some("mine"))
      assert.strictEqual(JSON.parse(readFileSync(target, "utf8")).access_token, "via-link")
    })
  )
})

describe("the directory check (the same verdict as the Effect 3 line and its CLI)", () => {
  it("ours or root's and closed: ok; ours and open: tighten or refuse; another's: refuse", () => {
    assert.strictEqual(TokenCache.directoryVerdict({ mode: 0o40700, uid: 1000 }, 1000), "ok")
    assert.strictEqual(TokenCache.directoryVerdict({ mode: 0o40755, uid: 0 }, 1000), "ok")
    assert.strictEqual(TokenCache.directoryVerdict({ mode: 0o40770, uid: 1000 }, 1000), "tighten")
    assert.strictEqual(TokenCache.directoryVerdict({ mode: 0o40700, uid: 1001 }, 1000), "refuse")
    assert.strictEqual(TokenCache.directoryVerdict({ mode: 0o41777, uid: 1000 }, 1000), "refuse")
    assert.include(TokenCache.directoryProblem({ mode: 0o40700, uid: 1001 }, 1000), "another user")
  })

  it.live("a group-writable directory made after the cache: every operation is a ConfigurationError naming it", () =>
    Effect.gen(function* () {
      // missing when the cache was made (judged at the first use, as on the Effect 3 line)
      const dir = join(tempDir(), "later")
      const cache = yield* TokenCache.file(join(dir, "tokens.json"))
      mkdirSync(dir)
      chmodSync(dir, 0o770)
      for (const operation of [
        cache.get,
        cache.set(token("x", 1)),
        cache.compareAndSet!(Option.none(), token("x", 1)),
        cache.withLock!(Effect.void),
        cache.clear!
      ]) {
        const error = yield* Effect.flip(operation)
        assert.strictEqual(error._tag, "ConfigurationError")
        assert.include(error.message, `chmod 700 ${dir}`)
      }
      assert.deepStrictEqual(readdirSync(dir), [])
    })
  )
})

describe.skipIf(!isRoot || !runs("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"]))(
  "files planted by another user (setpriv as uid 65534)",
  () => {
    it.live("a token file planted in a directory others can write: ConfigurationError, never the planted token", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        chmodSync(dir, 0o777)
        const path = join(dir, "tokens.json")
        asNobody(
          `printf '%s' '{"access_token":"ATTACKER-TOKEN-1","expires_at":9999999999,"refresh_token":"x"}' > ${path}`
        )
        const error = yield* Effect.flip(TokenCache.file(path))
        assert.strictEqual(error._tag, "ConfigurationError")
        assert.include(error.message, dir)
        assert.include(error.message, "chmod 700")
        assert.notInclude(error.message, "ATTACKER")
      })
    )

    it.live("a token file of another user in our own directory: ConfigurationError naming the file, at every use", () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        const cache = yield* TokenCache.file(path)
        writeFileSync(path, JSON.stringify({ access_token: "ATTACKER-TOKEN-2", expires_at: 9999999999 }), {
          mode: 0o600
        })
        chownSync(path, 65534, 65534)
        const error = yield* Effect.flip(cache.get)
        assert.strictEqual(error._tag, "ConfigurationError")
        assert.include(error.message, path)
        const provider = yield* AuthorizationCode.make({ ...credentials, tokenCache: cache }).pipe(
          Effect.provide(mock(issuing()))
        )
        const failed = yield* Effect.flip(provider.getAccessToken)
        assert.strictEqual(failed._tag, "ConfigurationError")
        assert.notInclude(failed.message, "ATTACKER")
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
          const path = join(dir, "tokens.json")
          const cache = yield* TokenCache.file(path, { lockWait: "3 seconds" })
          chmodSync(dir, 0o1777)
          plant(`${path}.lock`)
          const start = Date.now()
          const error = yield* Effect.flip(cache.withLock!(Effect.void))
          assert.strictEqual(error._tag, "ConfigurationError")
          assert.include(error.message, dir)
          assert.isBelow(Date.now() - start, 2500)
        })
      )
    }

    it.live("TokenStore.directory in a directory others can write: ConfigurationError", () =>
      Effect.gen(function* () {
        const dir = tempDir()
        chmodSync(dir, 0o777)
        const error = yield* Effect.flip(TokenStore.directory(dir))
        assert.strictEqual(error._tag, "ConfigurationError")
        assert.include(error.message, dir)
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
    writeFileSync(
      join(dir, "tokens.json.claim-rdeadbeefdeadbeef-0"),
      JSON.stringify({ kind: "replace", staged: "tokens.json.0badc0de-1-abcdef.tmp" })
    )
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
      const cache = yield* TokenCache.file(join(dir, "tokens.json"), { lockTtl: "2 seconds" })
      yield* cache.set(token("current", 100, "r"))
      leftovers(dir)
      yield* cache.withLock!(Effect.void)
      assert.deepStrictEqual(readdirSync(dir), ["tokens.json"])
    })
  )

  it.live("a claim of the current version left by a killed writer: the entry is written again, the claim swept", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      const cache = yield* TokenCache.file(path)
      yield* cache.set(token("current", 100, "r"))
      const before = JSON.parse(readFileSync(path, "utf8")) as { revision: string }
      writeFileSync(
        join(dir, `tokens.json.claim-r${before.revision}-0`),
        JSON.stringify({ kind: "replace", staged: "tokens.json.0badc0de-1-abcdef.tmp", pid: 1, host: "h", ttl: 1000 })
      )
      yield* cache.withLock!(Effect.void)
      assert.deepStrictEqual(readdirSync(dir), ["tokens.json"])
      const after = JSON.parse(readFileSync(path, "utf8")) as { access_token: string; revision: string }
      assert.strictEqual(after.access_token, "current")
      assert.notStrictEqual(after.revision, before.revision)
      assert.isTrue(yield* cache.compareAndSet!(Option.some(token("current", 1, "r")), token("next", 2)))
    })
  )

  it.live("a sign-out (clear) removes the entry and every temp file of it, fresh ones too", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const cache = yield* TokenCache.file(join(dir, "tokens.json"))
      yield* cache.set(token("current", 100, "CANARY-RT"))
      leftovers(dir)
      writeFileSync(join(dir, "tokens.json.0badc0de-3-abcdef.tmp"), "CANARY-RT fresh")
      yield* cache.clear!
      assert.isTrue(Option.isNone(yield* cache.get))
      assert.deepStrictEqual(canaries(dir), [])
    })
  )
})

describe("paths that name no place are a ConfigurationError", () => {
  it.effect("TokenStore.directory and TokenCache.file: empty, blank, the root", () =>
    Effect.gen(function* () {
      for (const path of ["", "   ", "/", "//", "/.."]) {
        const store = yield* Effect.exit(TokenStore.directory(path))
        assert.isTrue(Exit.isFailure(store) && JSON.stringify(store.cause).includes("ConfigurationError"), path)
      }
      for (const path of ["", " ", "/", "dir/", "."]) {
        const file = yield* Effect.exit(TokenCache.file(path))
        assert.isTrue(Exit.isFailure(file) && JSON.stringify(file.cause).includes("ConfigurationError"), path)
      }
    })
  )
})
