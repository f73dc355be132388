/**
 * Issue 42, the file and directory caches (DESIGN.md section 9, "Locks" and "Tokens"), on this line: a holder that
 * lost its lock while paused never acts on what it read under it (items 3 and 19), an entry a reader would not read
 * back is refused when written (item 4), a symlinked cache directory is judged where it resolves (item 10), a file
 * system without hard links still lets a user sign out (item 12), and a shared directory such as /tmp is never
 * advised a chmod (item 14). The Effect 3 line has the same tests
 * (`packages/service-sdk/test/sharedCaches/fileHardening.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TokenCache, TokenInfo, TokenStore } from "@service-sdk/effect"
import * as FileCache from "../../src/internal/fileCache.js"
import { operation } from "../../src/internal/fileProgram.js"
import { type Op, PortError } from "@service-sdk/shared/fileOps"

const tempDir = () => mkdtempSync(join(tmpdir(), "e4-hardening-"))
const token = (access: string, expiresAt: number, refresh?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(access),
    expiresAt,
    ...(refresh !== undefined ? { refreshToken: Redacted.make(refresh) } : {})
  })
const accessOf = (found: Option.Option<TokenInfo>) => Option.map(found, (t) => Redacted.value(t.accessToken))
const stored = (access: string, refresh = "refresh-1") =>
  JSON.stringify({ access_token: access, expires_at: 1e10, refresh_token: refresh })

/** A file cache whose steps run through `perform` (some slowed or failing). */
const cacheWith = (
  path: string,
  perform: (op: Op) => Effect.Effect<unknown, unknown>,
  lock = { ttlMillis: 10_000, waitMillis: 30_000 }
) => FileCache.makeFile(path, lock, { ok: false }, perform)

/** `link` fails as on a FAT, SMB or FUSE mount: EPERM. */
const noHardLinks = (op: Op) =>
  op._tag === "link" ? Effect.fail(new PortError("EPERM", "EPERM: operation not permitted, link")) : operation(op)

// at once: each waits out real lock TTLs and pauses of seconds, on files of its own
describe.concurrent("a holder that lost its lock while paused never acts on what it read under it", () => {
  it.live("paused past the TTL (its heartbeat too): another process takes over, and its read fails", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      writeFileSync(path, stored("old"), { mode: 0o600 })
      const lock = { ttlMillis: 400, waitMillis: 10_000 }
      // this process is paused under the lock: its first step there (the sweep) and every heartbeat stall
      const paused = cacheWith(
        path,
        (op) =>
          op._tag === "readdir"
            ? Effect.andThen(Effect.sleep("4 seconds"), operation(op))
            : op._tag === "touch"
              ? Effect.andThen(Effect.sleep("15 seconds"), operation(op))
              : operation(op),
        lock
      )
      const other = yield* TokenCache.file(path, { lockTtl: "400 millis", lockWait: "10 seconds" })
      let sent = false
      let otherHeld = false
      const holder = yield* Effect.forkChild(
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
      assert.isTrue(otherHeld)
      assert.strictEqual(error._tag, "TokenCacheError")
      assert.include(error.message, "lost the token lock file")
      assert.isFalse(sent)
    })
  )

  it.live("a live holder keeps its lock while it works past its TTL: no one else holds it meanwhile", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const options = { lockTtl: "3 seconds", lockWait: "30 seconds" } as const
      const first = yield* TokenCache.file(path, options)
      const second = yield* TokenCache.file(path, options)
      const events: Array<string> = []
      const holder = yield* Effect.forkChild(
        first.withLock!(
          Effect.andThen(
            Effect.flatMap(first.get, () => Effect.sleep("4500 millis")),
            Effect.sync(() => events.push("first done"))
          )
        )
      )
      yield* Effect.sleep("100 millis")
      yield* second.withLock!(Effect.sync(() => events.push("second in")))
      yield* Fiber.join(holder)
      assert.deepStrictEqual(events, ["first done", "second in"])
    })
  )
})

describe("an entry a reader would not read back is refused when written", () => {
  it.live("over 1 MiB: TokenCacheError, and the previous entry is kept", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const cache = yield* TokenCache.file(path)
      yield* cache.set(token("kept", 1e10, "r"))
      const huge = token("x".repeat(1 << 20), 1e10, "r2")
      const error = yield* Effect.flip(cache.set(huge))
      assert.strictEqual(error._tag, "TokenCacheError")
      assert.include(error.message, "1 MiB")
      const refused = yield* Effect.flip(cache.compareAndSet!(Option.none(), huge))
      assert.strictEqual(refused._tag, "TokenCacheError")
      assert.deepStrictEqual(accessOf(yield* cache.get), Option.some("kept"))
    })
  )

  it.live("just under the limit: written and read back (the limit is the reader's)", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const cache = yield* TokenCache.file(path)
      const access = "y".repeat((1 << 20) - 400)
      yield* cache.set(token(access, 1e10, "r"))
      assert.deepStrictEqual(accessOf(yield* cache.get), Option.some(access))
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
      const error = yield* Effect.flip(TokenCache.file(join(link, "tokens.json")))
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.include(error.message, `resolves to ${open}`)
      assert.notInclude(error.message, "chmod 700")
      // made synchronously (as a store does): refused at its first use
      const made = TokenCache.makeFile(join(link, "tokens.json"), { ttlMillis: 10_000, waitMillis: 30_000 })
      assert.strictEqual((yield* Effect.flip(made.set(token("a", 1e10, "r"))))._tag, "ConfigurationError")
      assert.deepStrictEqual(readdirSync(open), [])
      const store = yield* Effect.exit(TokenStore.directory(link))
      if (store._tag === "Success") {
        assert.strictEqual(
          (yield* Effect.flip(store.value("someone").set(token("a", 1e10))))._tag,
          "ConfigurationError"
        )
      } else {
        assert.include(String(store.cause), "ConfigurationError")
      }
      assert.deepStrictEqual(readdirSync(open), [])
    })
  )

  it.live("a link to a private directory of ours is used", () =>
    Effect.gen(function* () {
      const root = tempDir()
      const mine = join(root, "mine")
      mkdirSync(mine, { mode: 0o700 })
      symlinkSync(mine, join(root, "link"))
      const cache = yield* TokenCache.file(join(root, "link", "tokens.json"))
      yield* cache.set(token("a", 1e10))
      assert.deepStrictEqual(accessOf(yield* cache.get), Option.some("a"))
      assert.isTrue(existsSync(join(mine, "tokens.json")))
    })
  )
})

describe("a shared directory (sticky, as /tmp) is never advised a chmod", () => {
  it.live("a sticky world-writable directory: a private directory is advised instead", () =>
    Effect.gen(function* () {
      const shared = join(tempDir(), "shared")
      mkdirSync(shared)
      chmodSync(shared, 0o1777)
      const error = yield* Effect.flip(TokenCache.file(join(shared, "x.json")))
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.notInclude(error.message, "chmod 700")
      assert.include(error.message, "private directory")
    })
  )

  it.live.skipIf((statSync("/tmp").mode & 0o1022) !== 0o1022)(
    'TokenCache.file("/tmp/x.json") does not say "chmod 700 /tmp"',
    () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(TokenCache.file("/tmp/x.json"))
        assert.notInclude(error.message, "chmod 700 /tmp")
        assert.include(error.message, "private directory")
      })
  )
})

describe("a file system without hard links (link: EPERM)", () => {
  it.live("writes fail with a TokenCacheError that says why; a sign-out still removes the refresh token", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      writeFileSync(path, stored("old", "refresh-secret"), { mode: 0o600 })
      const cache = cacheWith(path, noHardLinks)
      const error = yield* Effect.flip(cache.set(token("new", 1e10, "r")))
      assert.strictEqual(error._tag, "TokenCacheError")
      assert.include(error.message, "hard links")
      assert.include(error.message, "Signing out still removes the token")
      // a renewal under the lock fails before it could send the refresh token it read
      const renewal = yield* Effect.flip(cache.withLock!(cache.get))
      assert.include(renewal.message, "hard links")
      assert.include(readFileSync(path, "utf8"), "refresh-secret")
      // the sign-out (what UserTokens.signOut runs: clear under withLock) leaves nothing behind
      yield* cache.withLock!(cache.clear!)
      assert.isFalse(existsSync(path))
      assert.deepStrictEqual(readdirSync(dir), [])
    })
  )

  it.live("clear without the lock removes the entry too", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = join(dir, "tokens.json")
      writeFileSync(path, stored("old"), { mode: 0o600 })
      yield* cacheWith(path, noHardLinks).clear!
      assert.deepStrictEqual(readdirSync(dir), [])
    })
  )
})
