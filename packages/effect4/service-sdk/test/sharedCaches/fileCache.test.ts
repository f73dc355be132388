/** TokenCache.file and TokenStore.directory (DESIGN section 3): atomic 0600 writes, locks, compare-and-set. */
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
  readlinkSync,
  statSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { TokenCache, TokenInfo, TokenStore } from "@service-sdk/effect"

const token = (access: string, refresh?: string) =>
  new TokenInfo({
    accessToken: Redacted.make(access),
    expiresAt: 100,
    ...(refresh !== undefined ? { refreshToken: Redacted.make(refresh) } : {})
  })
const tmp = () => mkdtempSync(join(tmpdir(), "e4-file-"))

describe("TokenCache.file", () => {
  it.live("writes 0600 in a 0700 directory it creates, leaves no temp file, reads back", () =>
    Effect.gen(function* () {
      const dir = join(tmp(), "nested")
      const cache = yield* TokenCache.file(join(dir, "token.json"))
      yield* cache.set(token("a", "r"))
      assert.strictEqual(statSync(join(dir, "token.json")).mode & 0o777, 0o600)
      assert.strictEqual(statSync(dir).mode & 0o777, 0o700)
      assert.deepStrictEqual(readdirSync(dir), ["token.json"])
      const read = yield* cache.get
      assert.strictEqual(Option.isSome(read) && Redacted.value(read.value.accessToken), "a")
    })
  )

  it.live("a missing, garbage or non-regular file reads as none", () =>
    Effect.gen(function* () {
      const dir = tmp()
      writeFileSync(join(dir, "garbage.json"), "{not json")
      assert.isTrue(Option.isNone(yield* (yield* TokenCache.file(join(dir, "missing.json"))).get))
      assert.isTrue(Option.isNone(yield* (yield* TokenCache.file(join(dir, "garbage.json"))).get))
      mkdirSync(join(dir, "a-directory.json"))
      assert.isTrue(Option.isNone(yield* (yield* TokenCache.file(join(dir, "a-directory.json"))).get))
    })
  )

  it.live("compareAndSet writes only over the expected entry (a refresh_rejected mark is no change)", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.file(join(tmp(), "t.json"))
      assert.isTrue(yield* cache.compareAndSet!(Option.none(), token("a1", "r1")))
      assert.isFalse(yield* cache.compareAndSet!(Option.none(), token("a2", "r2")))
      yield* cache.set(new TokenInfo({ ...token("a1", "r1"), refreshRejected: true }))
      assert.isTrue(yield* cache.compareAndSet!(Option.some(token("a1", "r1")), token("a3", "r3")))
      assert.isFalse(yield* cache.compareAndSet!(Option.some(token("a1", "r1")), token("a4", "r4")))
      const read = yield* cache.get
      assert.strictEqual(Option.isSome(read) && Redacted.value(read.value.accessToken), "a3")
    })
  )

  it.live("withLock excludes a second holder (another cache on the same file) and is re-entrant for its holder", () =>
    Effect.gen(function* () {
      const path = join(tmp(), "t.json")
      const a = yield* TokenCache.file(path)
      const b = yield* TokenCache.file(path)
      const order: Array<string> = []
      const first = yield* Effect.forkChild(
        a.withLock!(
          Effect.gen(function* () {
            order.push("a in")
            // re-entrant: a compare-and-set inside the hold takes no second lock
            yield* a.compareAndSet!(Option.none(), token("x"))
            yield* Effect.sleep("300 millis")
            order.push("a out")
          })
        )
      )
      yield* Effect.sleep("50 millis")
      assert.isTrue(existsSync(`${path}.lock`))
      yield* b.withLock!(Effect.sync(() => order.push("b in")))
      yield* Fiber.join(first)
      assert.deepStrictEqual(order, ["a in", "a out", "b in"])
      assert.isFalse(existsSync(`${path}.lock`))
    })
  )

  it.live(
    "an interrupted holder or waiter leaves no lock, claim or temp file behind (the shared programs' finally)",
    () =>
      Effect.gen(function* () {
        const dir = tmp()
        const path = join(dir, "t.json")
        const cache = yield* TokenCache.file(path, { lockWait: "20 seconds" })
        yield* cache.set(token("a", "r"))
        const holder = yield* Effect.forkChild(cache.withLock!(Effect.never))
        yield* Effect.sleep("100 millis")
        assert.isTrue(existsSync(`${path}.lock`))
        const waiter = yield* Effect.forkChild((yield* TokenCache.file(path)).withLock!(Effect.void))
        yield* Effect.sleep("150 millis")
        yield* Fiber.interrupt(waiter)
        yield* Fiber.interrupt(holder)
        assert.deepStrictEqual(readdirSync(dir), ["t.json"])
        // and the lock is free at once
        yield* (yield* TokenCache.file(path, { lockWait: "1 second" })).withLock!(Effect.void)
      })
  )

  it.live("a lock whose holder is provably gone (this host, boot and PID namespace) is taken over at once", () =>
    Effect.gen(function* () {
      const path = join(tmp(), "t.json")
      const ns = `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}/${readlinkSync("/proc/self/ns/pid")}`
      // process 2^22+7 does not exist
      const lock = { owner: "gone", pid: 4_194_311, host: hostname(), ttl: 10_000 }
      writeFileSync(`${path}.lock`, JSON.stringify({ ...lock, ns }))
      const cache = yield* TokenCache.file(path, { lockWait: "2 seconds" })
      yield* cache.withLock!(Effect.void)
      assert.isFalse(existsSync(`${path}.lock`))
      // without `ns` (a holder elsewhere, or an older writer) its pid proves nothing: it is waited on for its TTL
      writeFileSync(`${path}.lock`, JSON.stringify(lock))
      const waited = yield* Effect.flip(
        (yield* TokenCache.file(path, { lockWait: "300 millis" })).withLock!(Effect.void)
      )
      assert.match(waited.message, /gave up waiting/)
    })
  )
})

describe("files that must not hold tokens, and leftovers", () => {
  it.live("a directory or file other users can write is refused with a ConfigurationError that says why", () =>
    Effect.gen(function* () {
      const open = join(tmp(), "open")
      mkdirSync(open)
      chmodSync(open, 0o777)
      const error = yield* Effect.flip(TokenCache.file(join(open, "t.json")))
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.match(error.message, /other users can write to it \(mode 0777\).*chmod 700/)
      const dir = tmp()
      writeFileSync(join(dir, "t.json"), "{}")
      chmodSync(join(dir, "t.json"), 0o666)
      assert.match((yield* Effect.flip(TokenCache.file(join(dir, "t.json")))).message, /other users/)
      assert.strictEqual((yield* Effect.flip(TokenStore.directory(open)))._tag, "ConfigurationError")
    })
  )

  it.live("temp files left by a crashed writer are swept under the lock; a sign-out leaves no copy behind", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const path = join(dir, "t.json")
      const crashed = join(dir, "t.json.abc123.tmp")
      writeFileSync(crashed, '{"access_token":"a","expires_at":1,"refresh_token":"secret-refresh"}')
      const old = new Date(Date.now() - 120_000)
      utimesSync(crashed, old, old)
      const cache = yield* TokenCache.file(path)
      yield* cache.set(token("a", "r"))
      yield* cache.withLock!(Effect.void)
      assert.deepStrictEqual(readdirSync(dir), ["t.json"])
      writeFileSync(join(dir, "t.json.fresh.tmp"), "{}")
      yield* cache.clear!
      assert.deepStrictEqual(readdirSync(dir), [])
    })
  )
})

describe("TokenStore.directory", () => {
  it.live("one file per user, named by the Effect 3 line's rule; no id escapes the directory", () =>
    Effect.gen(function* () {
      const dir = join(tmp(), "users")
      const store = yield* TokenStore.directory(dir)
      yield* store("../../etc/passwd").set(token("evil"))
      yield* store("ada").set(token("ada"))
      const files = readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort()
      assert.strictEqual(files.length, 2)
      assert.isTrue(files.every((f) => /^[0-9a-f]{64}\.json$/.test(f)))
      assert.include(files, TokenStore.fileName("ada"))
      assert.strictEqual(statSync(dir).mode & 0o777, 0o700)
      yield* store("ada").clear!
      assert.isTrue(Option.isNone(yield* store("ada").get))
    })
  )
})
