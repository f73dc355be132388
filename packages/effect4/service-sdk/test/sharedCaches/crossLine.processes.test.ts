/**
 * Both lines' processes on one token file's lock, with real OS processes. A lock holder of one line in another PID
 * namespace with the same host name is never judged gone by a waiter of the other line. And the SIGKILL hammer with
 * both lines on one token file (the Effect 3 line's hammer.mjs, its workers alternating
 * between the Effect 3 lockWorker and this line's twin): each worker increments a counter in the file by a
 * compare-and-set under the lock while workers of either line are SIGKILLed at random. One file protocol (shared):
 * no two holders at once, no increment lost or made twice, no temp file or copy of a refresh token left behind.
 * The full run: `node packages/service-sdk/test/sharedCaches/hammer.mjs --processes 8 --kills 50 --worker <e3>,<e4>`.
 */
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { buildBoth } from "../support/fleet.js"

const root = join(import.meta.dirname, "..", "..", "..", "..", "..")
const sharedCaches = join(root, "packages", "service-sdk", "test", "sharedCaches")
const effect4Worker = join(import.meta.dirname, "..", "support", "fleet", "lock-worker.mjs")
let effect3Worker = ""

beforeAll(() => {
  buildBoth()
  // the Effect 3 worker, bundled from its sources as the Effect 3 line's own hammer test does
  effect3Worker = execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { bundle } from ${JSON.stringify(join(sharedCaches, "bundle.mjs"))}; console.log(bundle("lockWorker"))`
    ],
    { encoding: "utf8" }
  ).trim()
}, 180_000)

const unshareWorks =
  process.getuid?.() === 0 && spawnSync("unshare", ["--pid", "--fork", "true"], { stdio: "ignore" }).status === 0
if (!unshareWorks) {
  console.warn(
    "SKIPPED: the PID-namespace test needs root and `unshare --pid --fork` (util-linux); it did not run here"
  )
}

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))
const exited = (child: ReturnType<typeof spawn>) =>
  new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))

describe.skipIf(!unshareWorks)("two PID namespaces, one host name, both lines", () => {
  for (const [holderLine, waiterLine] of [
    [3, 4],
    [4, 3]
  ] as const) {
    it(`an Effect ${holderLine} holder in another namespace is not judged gone by an Effect ${waiterLine} waiter`, {
      timeout: 120_000
    }, async () => {
      const workerOf = (line: 3 | 4) => (line === 3 ? effect3Worker : effect4Worker)
      const dir = mkdtempSync(join(tmpdir(), "e4-pidns-"))
      const log = join(dir, "log")
      const path = join(dir, "tokens.json")
      const config = (mode: string, name: string, extra: Record<string, unknown>) =>
        JSON.stringify({ mode, name, path, log, lockTtl: "4 seconds", lockWait: "60 seconds", ...extra })
      // the holder runs as pid 60 or so of its namespace; the waiter as pid 1 of another one: the holder's pid does
      // not exist in the waiter's namespace, so a check of the pid alone (`kill(pid, 0)`: ESRCH) would call it gone
      const a = spawn(
        "unshare",
        [
          "--pid",
          "--fork",
          "sh",
          "-c",
          'i=0; while [ $i -lt 60 ]; do /bin/true; i=$((i+1)); done; "$0" "$1" "$2"',
          process.execPath,
          workerOf(holderLine),
          config("hold", "A", { holdMs: 3000 })
        ],
        { stdio: "ignore" }
      )
      const aDone = exited(a)
      const text = () => {
        try {
          return readFileSync(log, "utf8")
        } catch {
          return ""
        }
      }
      const end = Date.now() + 60_000
      while (!text().includes("locked A") && Date.now() < end) await sleep(20)
      expect(text()).toContain("locked A")
      expect((JSON.parse(readFileSync(`${path}.lock`, "utf8")) as { pid: number }).pid).toBeGreaterThan(40)
      const b = spawn("unshare", ["--pid", "--fork", process.execPath, workerOf(waiterLine), config("take", "B", {})], {
        stdio: "ignore"
      })
      expect(await Promise.all([aDone, exited(b)])).toEqual([0, 0])
      expect(text().trim().split("\n")).toEqual(["locked A", "released A", "acquired B"])
    })
  }
})

interface Report {
  readonly holds: number
  readonly increments: number
  readonly final: number
  readonly overlaps: number
  readonly lostUpdates: number
  readonly leftovers: ReadonlyArray<string>
  readonly canaryCopies: ReadonlyArray<string>
  readonly workerErrors: ReadonlyArray<string>
}

const hammer = (args: ReadonlyArray<string>) =>
  new Promise<Report>((resolve, reject) =>
    execFile(
      process.execPath,
      [join(sharedCaches, "hammer.mjs"), ...args, "--worker", `${effect3Worker},${effect4Worker}`],
      { timeout: 240_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error !== null) return reject(new Error(`hammer failed: ${error.message}\n${stderr}`))
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as Report)
      }
    )
  )

describe("both lines on one token file, under SIGKILL", () => {
  it("6 processes (3 of each line), 16 of them SIGKILLed: no overlap, no lost update, nothing left", {
    timeout: 300_000
  }, async () => {
    const report = await hammer(["--processes", "6", "--kills", "16"])
    console.info(`mixed-line hammer: ${JSON.stringify(report)}`)
    expect(report.workerErrors).toEqual([])
    expect(report.overlaps).toBe(0)
    expect(report.lostUpdates).toBe(0)
    expect(report.leftovers).toEqual([])
    expect(report.canaryCopies).toEqual([])
    expect(report.increments).toBeGreaterThanOrEqual(6)
    // every logged increment is in the file, whichever line made it (a worker killed between its write and its log
    // line adds one unlogged increment: at most one per kill)
    expect(report.final).toBeGreaterThanOrEqual(report.increments)
    expect(report.final).toBeLessThanOrEqual(report.increments + 16)
  })
})
