/**
 * Part 11. One token file shared by the processes of one machine (several CLI invocations, web-app workers): N
 * processes (8; 2 in quick mode) × 50 callers on one client whose tokens live 3 s and are renewed 1 s early (an
 * expiry every 2 s). Two runs alternate, each from cold for the same time: the processes sharing `TokenCache.file`
 * (its lock file and compare-and-set), and the same file without them (`get`/`set` only: the baseline, up to N
 * requests per expiry). Figure: token requests per expiry of all the processes together (target 1; part 8 gives the
 * same figure for `RedisTokenCache`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Context } from "../context.js"
import { startWorkerEmulator, type WorkerEmulator } from "../emulator.js"
import { median, ratioOf } from "../harness.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

const TOKEN_LIFETIME_S = 3
const EXPIRY_EVERY_MS = 2000
const CALLERS = 50

interface Run {
  readonly requests: number
  readonly expiries: number
  readonly calls: number
}

const startWorker = (config: object) =>
  new Promise<{ readonly child: ChildProcess; readonly result: Promise<{ calls: number }> }>((resolve, reject) => {
    const script = fileURLToPath(new URL("../sharedFileWorker.js", import.meta.url))
    const child = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stderr?.on("data", (chunk) => {
      stderr += String(chunk)
    })
    const result = new Promise<{ calls: number }>((done, fail) =>
      child.once("exit", (code) => {
        if (code === 0) done(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"))
        else fail(new Error(`shared file worker exited with ${code}: ${stderr}`))
      })
    )
    result.catch(reject)
    child.stdout?.on("data", (chunk) => {
      stdout += String(chunk)
      if (stdout.startsWith("ready\n")) resolve({ child, result })
    })
  })

const run = async (
  emulator: WorkerEmulator,
  processes: number,
  expiries: number,
  path: string,
  lock: boolean
): Promise<Run> => {
  const durationMs = expiries * EXPIRY_EVERY_MS + 500
  const config = {
    path,
    lock,
    authUrl: emulator.authUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    callers: CALLERS,
    pauseMs: 20,
    durationMs,
    skew: "1 second"
  }
  const workers = await Promise.all(Array.from({ length: processes }, () => startWorker(config)))
  const before = await emulator.tokenRequests()
  for (const worker of workers) worker.child.stdin?.end("go\n")
  const results = await Promise.all(workers.map((worker) => worker.result))
  const requests = (await emulator.tokenRequests()) - before
  // the cold fetch counts as one more expiry
  return {
    requests,
    expiries: Math.floor(durationMs / EXPIRY_EVERY_MS) + 1,
    calls: results.reduce((sum, result) => sum + result.calls, 0)
  }
}

export const sharedFile = async (context: Context): Promise<PartResult> => {
  const title = "One token file across OS processes: with its lock and compare-and-set, against without"
  const processes = context.quick ? 2 : 8
  const expiries = context.quick ? 1 : 3
  const rounds = context.quick ? 1 : 3
  const emulator = await startWorkerEmulator({ tokenLatencyMs: 20, tokenLifetime: TOKEN_LIFETIME_S })
  const dir = mkdtempSync(join(tmpdir(), "bench-shared-file-"))
  const locked: Array<Run> = []
  const unlocked: Array<Run> = []
  try {
    for (let round = 0; round < rounds; round++) {
      context.log(`  shared file round ${round + 1}/${rounds}`)
      const withLock = async () =>
        locked.push(await run(emulator, processes, expiries, join(dir, `locked-${round}.json`), true))
      const without = async () =>
        unlocked.push(await run(emulator, processes, expiries, join(dir, `unlocked-${round}.json`), false))
      // alternate which goes first
      if (round % 2 === 0) {
        await withLock()
        await without()
      } else {
        await without()
        await withLock()
      }
    }
  } finally {
    await emulator.close()
    rmSync(dir, { recursive: true, force: true })
  }
  const perExpiry = (runs: ReadonlyArray<Run>) => runs.map((one) => one.requests / one.expiries)
  const lockedPerExpiry = perExpiry(locked)
  const unlockedPerExpiry = perExpiry(unlocked)
  return {
    title,
    figures: [
      figure(
        {
          label: `token requests per expiry, ${processes} processes × ${CALLERS} callers on TokenCache.file`,
          value: median(lockedPerExpiry),
          unit: "requests"
        },
        {
          baseline: {
            label: "the same file without withLock/compareAndSet",
            value: median(unlockedPerExpiry),
            unit: "requests"
          },
          ratio: ratioOf(lockedPerExpiry, unlockedPerExpiry),
          target: { on: "value", op: "<=", limit: 1.5 }
        }
      )
    ],
    notes: [
      `tokens live ${TOKEN_LIFETIME_S} s and are renewed 1 s early: an expiry every 2 s; ${expiries} expiries plus the cold fetch per run, ${rounds} rounds`,
      "a waiting process polls the lock file every 20–60 ms; part 8 gives the same figure for RedisTokenCache"
    ],
    data: { locked, unlocked }
  }
}
