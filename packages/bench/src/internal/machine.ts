/**
 * The machine a run is on, and the wait for it to be quiet before each part.
 *
 * Quiet means two things, checked together every 250 ms (shorter when the bounded wait is) until both hold or the
 * bounded wait passes:
 * - the whole machine (Linux `/proc/stat`, all cores) was busy less than 20 % of the window, so no other process is
 *   competing with the next measurement (this process and the emulator worker are idle while we wait);
 * - a fixed busy loop (~2 ms of arithmetic) run five times takes within 10 % of the fastest time seen, so the CPU is
 *   neither throttled nor shared right now.
 * A part that starts without quiet says so in its output (and in the JSON), with the figures seen.
 */
import { readFileSync } from "node:fs"
import * as os from "node:os"
import { setTimeout as sleep } from "node:timers/promises"

export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly platform: string
  readonly node: string
  readonly date: string
}

export const machine = (): Machine => ({
  cpu: os.cpus()[0]?.model.trim() ?? "unknown",
  cores: os.availableParallelism(),
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  platform: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version,
  date: new Date().toISOString()
})

export interface Quiet {
  readonly quiet: boolean
  readonly waitedMs: number
  /** share of all cores busy in the last window (0–1), when the platform tells */
  readonly machineBusy: number | undefined
  /** the last spins' median over the fastest spin seen */
  readonly spinRatio: number
  readonly loadAverage1m: number
}

let sink = 0
/** A fixed amount of integer arithmetic; its duration tracks how much CPU this thread gets. */
const spin = (): number => {
  const start = performance.now()
  let x = sink
  for (let i = 0; i < 1_500_000; i++) x = (x * 31 + i) | 0
  sink = x
  return performance.now() - start
}

const cpuTimes = (): { readonly busy: number; readonly total: number } | undefined => {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!
    const fields = line.trim().split(/\s+/).slice(1).map(Number)
    const total = fields.reduce((sum, value) => sum + value, 0)
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
    return { busy: total - idle, total }
  } catch {
    return undefined
  }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const waitForQuiet = async (maxWaitMs: number): Promise<Quiet> => {
  const start = performance.now()
  let best = Number.POSITIVE_INFINITY
  const window = Math.min(250, maxWaitMs)
  for (;;) {
    const before = cpuTimes()
    await sleep(window)
    const after = cpuTimes()
    const machineBusy =
      before !== undefined && after !== undefined && after.total > before.total
        ? (after.busy - before.busy) / (after.total - before.total)
        : undefined
    const spins = Array.from({ length: 5 }, spin)
    best = Math.min(best, ...spins)
    const spinRatio = median(spins) / best
    const waitedMs = performance.now() - start
    const quiet = (machineBusy === undefined || machineBusy < 0.2) && spinRatio <= 1.1
    if (quiet || waitedMs >= maxWaitMs) {
      return { quiet, waitedMs, machineBusy, spinRatio, loadAverage1m: os.loadavg()[0]! }
    }
  }
}

/** `gc()`, exposing it first when node was started without `--expose-gc`. */
export const gc = (() => {
  let collect: (() => void) | undefined
  return async (passes = 4): Promise<void> => {
    if (collect === undefined) {
      const exposed = (globalThis as { gc?: () => void }).gc
      if (exposed !== undefined) collect = exposed
      else {
        const v8 = await import("node:v8")
        const vm = await import("node:vm")
        v8.setFlagsFromString("--expose-gc")
        collect = vm.runInNewContext("gc") as () => void
      }
    }
    // several rounds: finalizers and weak references free more on the next pass
    for (let i = 0; i < passes; i++) {
      collect()
      await sleep(5)
    }
  }
})()

/**
 * Wall-clock epoch milliseconds for code outside Effect: the peers' own APIs (google-auth-library's `expiry_date`)
 * and the hand-written cache class. Effect code in the bench reads the `Clock`.
 */
export const wallClockMillis = (): number => performance.timeOrigin + performance.now()

/**
 * CPU time this thread has run (ns), from Linux's per-thread scheduler counters; undefined elsewhere. Unlike wall
 * time it hardly moves with the machine's load (other processes' time is not counted, nor the emulator's thread).
 */
export const threadCpuNanos = (): number | undefined => {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ", 1)[0])
  } catch {
    return undefined
  }
}
