/**
 * Issue 28 with real OS processes: a lock holder in another PID namespace with the same host name (a container of a
 * Compose service with `hostname:`) is never judged gone; and the SIGKILL hammer (hammer.mjs, here with a modest
 * count: `node packages/service-sdk/test/sharedCaches/hammer.mjs --processes 8 --kills 50` runs the full one).
 */
import { execFile, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bundle, isRoot, runs, tempDir } from "./support.js"

const live = (name: string, body: () => Promise<void>, timeout = 120_000) =>
  it.live(name, () => Effect.promise(body), timeout)

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

const unshareWorks = isRoot && runs("unshare", ["--pid", "--fork", "true"])
if (!unshareWorks) {
  console.warn(
    "SKIPPED: the PID-namespace test needs root and `unshare --pid --fork` (util-linux); it did not run here"
  )
}

let worker = ""
beforeAll(() => {
  worker = bundle("lockWorker")
}, 120_000)

const exited = (child: ReturnType<typeof spawn>) =>
  new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))

describe.skipIf(!unshareWorks)("two PID namespaces, one host name", () => {
  live(
    "a holder in another PID namespace is not judged gone: the waiter gets the lock only after its release",
    async () => {
      const dir = tempDir()
      const log = join(dir, "log")
      const path = join(dir, "tokens.json")
      const config = (mode: string, name: string, extra: Record<string, unknown>) =>
        JSON.stringify({ mode, name, path, log, lockTtl: "4 seconds", lockWait: "60 seconds", ...extra })
      // A runs as pid 60 or so of its namespace (a shell runs 60 short-lived children first); B as pid 1 of another
      // one, its threads taking the next few ids: A's pid does not exist in B's namespace, so a check of the pid alone
      // (`kill(pid, 0)`: ESRCH) would call A gone
      const a = spawn(
        "unshare",
        [
          "--pid",
          "--fork",
          "sh",
          "-c",
          'i=0; while [ $i -lt 60 ]; do /bin/true; i=$((i+1)); done; "$0" "$1" "$2"',
          process.execPath,
          worker,
          config("hold", "A", { holdMs: 3000 })
        ],
        { stdio: "ignore" }
      )
      const aDone = exited(a)
      const end = Date.now() + 60_000
      const text = () => {
        try {
          return readFileSync(log, "utf8")
        } catch {
          return ""
        }
      }
      while (!text().includes("locked A") && Date.now() < end) await sleep(20)
      expect(text()).toContain("locked A")
      const holder = JSON.parse(readFileSync(`${path}.lock`, "utf8")) as { pid: number; ns: string }
      expect(holder.pid).toBeGreaterThan(40)
      const b = spawn("unshare", ["--pid", "--fork", process.execPath, worker, config("take", "B", {})], {
        stdio: "ignore"
      })
      const [aCode, bCode] = await Promise.all([aDone, exited(b)])
      expect([aCode, bCode]).toEqual([0, 0])
      const lines = text().trim().split("\n")
      expect(lines).toEqual(["locked A", "released A", "acquired B"])
    }
  )
})

const hammer = (args: ReadonlyArray<string>) =>
  new Promise<Record<string, unknown>>((resolve, reject) =>
    execFile(
      process.execPath,
      [fileURLToPath(new URL("./hammer.mjs", import.meta.url)), ...args, "--worker", worker],
      { timeout: 240_000 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout.trim().split("\n").pop()!)))
    )
  )

describe("the SIGKILL hammer", () => {
  live(
    "8 processes incrementing one file under its lock, 12 of them SIGKILLed: no overlap, no lost update, nothing left",
    async () => {
      const report = await hammer(["--processes", "8", "--kills", "12"])
      expect(report.workerErrors).toEqual([])
      expect(report.overlaps).toBe(0)
      expect(report.lostUpdates).toBe(0)
      expect(report.leftovers).toEqual([])
      expect(report.canaryCopies).toEqual([])
      expect(report.increments as number).toBeGreaterThan(12)
    },
    300_000
  )

  live(
    "holders paused (SIGSTOP) past a 1 s lock TTL and resumed: their writes are refused, no lost update",
    async () => {
      const report = await hammer(["--processes", "8", "--kills", "0", "--stops", "3", "--lock-ttl", "1 second"])
      expect(report.workerErrors).toEqual([])
      expect(report.lostUpdates).toBe(0)
      expect(report.leftovers).toEqual([])
      expect(report.increments as number).toBeGreaterThan(3)
    },
    300_000
  )
})
