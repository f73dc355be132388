/**
 * Issue 28's interleavings on this line: the shared file protocol run by this line's interpreter with one step
 * slowed down (every kind of step in turn). Two writers that expected the same entry never both win; waiters that
 * judge one stale lock at once never hold it together. (The Effect 3 line runs the same programs on its wrapped
 * `FileSystem`: `packages/service-sdk/test/sharedCaches/interleavings.test.ts`.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { operation, run } from "../../src/internal/fileProgram.js"
import * as FileEntry from "@service-sdk/shared/fileEntry"
import type { Op } from "@service-sdk/shared/fileOps"

const STEPS: ReadonlyArray<Op["_tag"]> = ["read", "writeNew", "link", "rename", "remove", "rmdir", "exists", "readdir"]
const tempDir = () => mkdtempSync(join(tmpdir(), "e4-interleave-"))
const text = (access: string) => JSON.stringify({ access_token: access, expires_at: 100 })
const accessIn = (path: string) => (JSON.parse(readFileSync(path, "utf8")) as { access_token: string }).access_token

/** This line's steps, `step` slowed by `millis` (for paths `only` accepts). */
const slowed =
  (step: Op["_tag"], millis: number, only: (op: Op) => boolean = () => true) =>
  (op: Op) =>
    op._tag === step && only(op) ? Effect.andThen(Effect.sleep(`${millis} millis`), operation(op)) : operation(op)

const options = { ttlMillis: 300, waitMillis: 10_000 }

describe.concurrent("compare-and-set: two writers that expected the same entry, one step of one of them slowed", () => {
  for (const step of STEPS) {
    it.live(`${step} slowed: at most one wins, and the entry holds the winner's token`, () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        const entry = FileEntry.make(path, options)
        yield* run(() => entry.write(text("start")))
        const fromStart = (current: string | undefined) =>
          current !== undefined && (JSON.parse(current) as { access_token: string }).access_token === "start"
        const [slow, fast] = yield* Effect.all(
          [
            run(() => entry.write(text("slow"), fromStart), slowed(step, 400)),
            Effect.andThen(
              Effect.sleep("50 millis"),
              run(() => entry.write(text("fast"), fromStart))
            )
          ],
          { concurrency: 2 }
        )
        assert.isFalse(slow && fast, "both won")
        assert.isTrue(slow || fast, "neither won")
        assert.strictEqual(accessIn(path), slow ? "slow" : "fast")
      })
    )
  }
})

describe.concurrent("takeover: waiters that judge one stale lock at once, one step of some of them slowed", () => {
  for (const step of STEPS) {
    it.live(`${step} slowed: one holder at a time`, () =>
      Effect.gen(function* () {
        const path = join(tempDir(), "tokens.json")
        // a lock whose holder stopped keeping it alive a minute ago: stale for every waiter at once
        writeFileSync(`${path}.lock`, JSON.stringify({ owner: "frozen", pid: 1, host: "elsewhere", ttl: 1000 }), {
          mode: 0o600
        })
        const past = new Date(Date.now() - 60_000)
        utimesSync(`${path}.lock`, past, past)
        const inside: Array<string> = []
        const overlaps: Array<string> = []
        let holds = 0
        const holder = (name: string, millis: number) => {
          // a TTL far beyond the test (no heartbeat runs here): only a broken takeover could let two in
          const lock = FileEntry.make(path, { ttlMillis: 5_000, waitMillis: 20_000 }).lock
          const perform = slowed(step, millis, (op) => "path" in op && op.path.includes(".lock"))
          return Effect.gen(function* () {
            const held = yield* run(lock.acquire, perform)
            if (inside.length > 0) overlaps.push(`${name} with ${inside.join(",")}`)
            inside.push(name)
            holds++
            yield* Effect.sleep("60 millis")
            inside.splice(inside.indexOf(name), 1)
            yield* run(() => lock.release(held), perform)
          })
        }
        yield* Effect.all([holder("a", 300), holder("b", 120), holder("c", 0)], { concurrency: 3 })
        assert.deepStrictEqual(overlaps, [])
        assert.strictEqual(holds, 3)
      })
    )
  }
})
