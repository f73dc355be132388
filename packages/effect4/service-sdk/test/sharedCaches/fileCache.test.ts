/** TokenCache.file and TokenStore.directory (DESIGN section 3): atomic 0600 writes, locks, compare-and-set. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { TokenCache, TokenInfo, TokenStore } from "service-sdk"

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
      assert.isTrue(Option.isNone(yield* (yield* TokenCache.file(dir)).get))
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

  it.live("a lock whose holder process is gone is taken over at once", () =>
    Effect.gen(function* () {
      const path = join(tmp(), "t.json")
      // a lock file of this host's process 2^22+7, which does not exist
      writeFileSync(`${path}.lock`, JSON.stringify({ owner: "gone", pid: 4_194_311, host: hostname(), ttl: 600_000 }))
      const cache = yield* TokenCache.file(path, { lockWait: "2 seconds" })
      yield* cache.withLock!(Effect.void)
      assert.isFalse(existsSync(`${path}.lock`))
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
