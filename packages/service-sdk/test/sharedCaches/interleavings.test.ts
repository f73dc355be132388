/**
 * Issue 28: the file cache's compare-and-set and the lock's takeover under delays injected at every step (a wrapped
 * `FileSystem`). Two writers that expected the same entry never both win, whatever the lock did; two waiters that
 * judge one lock stale at once never both hold it. (On the previous code: "both won" with a delayed rename, and two
 * holders with a delayed remove.)
 */
import { utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import { TokenCache, type TokenInfo } from "@service-sdk/effect"
import { accessOf, delayedFileSystem, fileCache, STEPS, type Step, tempDir, tokenInfo } from "./support.js"

const cacheOn = (path: string, layer: ReturnType<typeof delayedFileSystem>, options: TokenCache.FileOptions) =>
  TokenCache.file(path, options).pipe(Effect.provide(layer))

describe.concurrent("compareAndSet: two writers that expected the same entry, a delay at every step of one of them", () => {
  for (const step of STEPS) {
    it.live(`${step} delayed: at most one wins, and the entry holds the winner's token`, () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        const start = tokenInfo("start", 100, { refreshToken: "r0" })
        yield* (yield* fileCache(path)).set(start)
        // A is slow at `step`, and its heartbeat is slower than the lock's TTL: B takes the lock over meanwhile
        const delays: Partial<Record<Step, number>> = { [step]: 700, utimes: 5_000 }
        const options = { lockTtl: "250 millis", lockWait: "10 seconds" } as const
        const a = yield* cacheOn(path, delayedFileSystem(delays), options)
        const b = yield* cacheOn(path, delayedFileSystem({}), options)
        const write = (cache: TokenCache.TokenCache, next: TokenInfo, after: number) =>
          Effect.zipRight(Effect.sleep(`${after} millis`), cache.compareAndSet!(Option.some(start), next))
        const [aWon, bWon] = yield* Effect.all(
          [
            write(a, tokenInfo("from-a", 200, { refreshToken: "ra" }), 0),
            write(b, tokenInfo("from-b", 200, { refreshToken: "rb" }), 50)
          ],
          { concurrency: "unbounded" }
        )
        expect(aWon && bWon).toBe(false)
        const stored = accessOf(yield* (yield* fileCache(path)).get)
        expect(stored).toEqual(Option.some(aWon ? "from-a" : bWon ? "from-b" : "start"))
      })
    )
  }

  it.live("set (a sign-in) outside any lock never lands between another writer's read and write", () =>
    Effect.gen(function* () {
      const path = join(tempDir(), "tokens.json")
      const start = tokenInfo("start", 100, { refreshToken: "r0" })
      yield* (yield* fileCache(path)).set(start)
      // the renewal reads the entry at about 400 ms (after its lock) and writes at about 800 ms: the sign-in lands between
      const slow = yield* cacheOn(path, delayedFileSystem({ writeFileString: 400 }), { lockTtl: "5 seconds" })
      const fast = yield* fileCache(path)
      const [won] = yield* Effect.all(
        [
          slow.compareAndSet!(Option.some(start), tokenInfo("renewed", 200, { refreshToken: "r1" })),
          Effect.zipRight(Effect.sleep("550 millis"), fast.set(tokenInfo("signed-in", 300, { refreshToken: "s1" })))
        ],
        { concurrency: "unbounded" }
      )
      // either the renewal landed first and the sign-in after it, or the sign-in landed and the renewal was refused
      expect(accessOf(yield* fast.get)).toEqual(Option.some("signed-in"))
      expect(typeof won).toBe("boolean")
    })
  )
})

describe.concurrent("takeover: waiters that judge one lock stale at once, a delay at every step of some of them", () => {
  const scopes = [
    ["the lock file", (file: string) => file.endsWith(".lock")],
    ["the lock's files", (file: string) => file.includes(".lock")]
  ] as const
  for (const step of STEPS) {
    for (const [scope, only] of scopes) {
      it.live(`${step} on ${scope} delayed: one holder at a time`, () =>
        Effect.gen(function* () {
          const path = join(tempDir(), "tokens.json")
          // a lock whose holder stopped keeping it alive a minute ago: stale for every waiter
          writeFileSync(`${path}.lock`, JSON.stringify({ owner: "frozen", pid: 1, host: "elsewhere", ttl: 1000 }))
          const past = new Date(Date.now() - 60_000)
          utimesSync(`${path}.lock`, past, past)
          const inside = yield* Ref.make(0)
          const overlaps = yield* Ref.make(0)
          const holds = yield* Ref.make(0)
          const hold = (cache: TokenCache.TokenCache) =>
            cache.withLock!(
              Effect.gen(function* () {
                if ((yield* Ref.getAndUpdate(inside, (n) => n + 1)) > 0) yield* Ref.update(overlaps, (n) => n + 1)
                yield* Ref.update(holds, (n) => n + 1)
                yield* Effect.sleep("350 millis")
                yield* Ref.update(inside, (n) => n - 1)
              })
            )
          const options = { lockTtl: "5 seconds", lockWait: "20 seconds" } as const
          const waiters = yield* Effect.all([
            cacheOn(path, delayedFileSystem({ [step]: 300 }, { only }), options),
            cacheOn(path, delayedFileSystem({ [step]: 120 }, { only }), options),
            cacheOn(path, delayedFileSystem({}), options)
          ])
          yield* Effect.all(
            waiters.map((cache) => hold(cache)),
            { concurrency: "unbounded" }
          )
          expect(yield* Ref.get(overlaps)).toBe(0)
          expect(yield* Ref.get(holds)).toBe(3)
        })
      )
    }
  }
})
