/**
 * Part 8. The fleet: N processes (8; 2 in quick mode) × 50 callers on one client-credentials client whose tokens
 * live 3 s and are renewed 1 s early, so that an expiry comes every 2 s. Two runs alternate, each from cold for the
 * same time: the processes sharing a `RedisTokenCache` (a real redis-server), and the baseline, each process on its
 * own memory cache. Figures: the token requests per expiry of the whole fleet, and the p99 of the waits at an expiry
 * (the calls not served from memory), each as a ratio of the baseline's. Then a failover (full runs only): 4
 * processes sharing a cache on a Sentinel group (1 master, 1 replica, 3 sentinels) whose master is SIGKILLed 2 s
 * into the run, against the same run without the kill: token requests per expiry and the longest call.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { accessSync, constants } from "node:fs"
import { createConnection, createServer } from "node:net"
import { delimiter, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Context } from "../context.js"
import { startWorkerEmulator, type WorkerEmulator } from "../emulator.js"
import { MASTER_NAME, type SentinelGroup, startSentinelGroup } from "../failover.js"
import { median, ratioOf } from "../harness.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

const TOKEN_LIFETIME_S = 3
const SKEW = "1 second"
const EXPIRY_EVERY_MS = 2000
const CALLERS = 50

const redisServerBinary = (): string | undefined =>
  [...(process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== ""), "/usr/bin"]
    .map((dir) => join(dir, "redis-server"))
    .find((path) => {
      try {
        accessSync(path, constants.X_OK)
        return true
      } catch {
        return false
      }
    })

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const ping = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    socket.once("error", () => resolve(false))
    socket.once("connect", () => socket.write("PING\r\n"))
    socket.once("data", (data) => {
      socket.destroy()
      resolve(String(data).startsWith("+PONG"))
    })
  })

const startRedis = async (binary: string) => {
  const port = await freePort()
  const child = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore"
  })
  for (let attempt = 0; !(await ping(port)); attempt++) {
    if (attempt > 100) throw new Error("redis-server did not start")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill("SIGKILL") }
}

interface Run {
  readonly requests: number
  readonly expiries: number
  readonly waits: ReadonlyArray<number>
  readonly calls: number
}

const startWorker = (config: object) =>
  new Promise<{ readonly child: ChildProcess; readonly result: Promise<{ calls: number; waits: Array<number> }> }>(
    (resolve, reject) => {
      const script = fileURLToPath(new URL("../fleetWorker.js", import.meta.url))
      const child = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: ["pipe", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stderr?.on("data", (chunk) => {
        stderr += String(chunk)
      })
      const result = new Promise<{ calls: number; waits: Array<number> }>((done, fail) =>
        child.once("exit", (code) => {
          if (code === 0) done(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"))
          else fail(new Error(`fleet worker exited with ${code}: ${stderr}`))
        })
      )
      result.catch(reject)
      child.stdout?.on("data", (chunk) => {
        stdout += String(chunk)
        if (stdout.startsWith("ready\n")) resolve({ child, result })
      })
    }
  )

const run = async (
  emulator: WorkerEmulator,
  processes: number,
  expiries: number,
  redisUrl: string | null,
  failover?: { readonly group: SentinelGroup; readonly kill: boolean; readonly killed?: Array<number> }
): Promise<Run> => {
  const key = `bench:fleet:${randomUUID()}`
  const durationMs = expiries * EXPIRY_EVERY_MS + 500
  const config = {
    ...(failover === undefined ? {} : { sentinel: { sentinels: failover.group.sentinels, name: MASTER_NAME } }),
    redisUrl,
    key,
    authUrl: emulator.authUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    callers: CALLERS,
    pauseMs: 20,
    durationMs,
    skew: SKEW
  }
  const workers = await Promise.all(Array.from({ length: processes }, () => startWorker(config)))
  const before = await emulator.tokenRequests()
  for (const worker of workers) worker.child.stdin?.end("go\n")
  if (failover?.kill === true) {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    failover.killed?.push(await failover.group.killMaster())
  }
  const results = await Promise.all(workers.map((worker) => worker.result))
  const requests = (await emulator.tokenRequests()) - before
  // the cold fetch counts as one more expiry
  return {
    requests,
    expiries: Math.floor(durationMs / EXPIRY_EVERY_MS) + 1,
    waits: results.flatMap((result) => result.waits),
    calls: results.reduce((sum, result) => sum + result.calls, 0)
  }
}

const p99 = (values: ReadonlyArray<number>) => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!
}

export const fleet = async (context: Context): Promise<PartResult> => {
  const title = "The fleet: one RedisTokenCache across OS processes, against each process on its own"
  const binary = redisServerBinary()
  if (binary === undefined) {
    return {
      title,
      figures: [figure({ label: "skipped: no redis-server on PATH", value: 0, unit: "requests" })],
      notes: ["install redis-server to measure the fleet"]
    }
  }
  const processes = context.quick ? 2 : 8
  const expiries = context.quick ? 1 : 3
  const rounds = context.quick ? 1 : 3
  const redis = await startRedis(binary)
  const emulator = await startWorkerEmulator({ tokenLatencyMs: 20, tokenLifetime: TOKEN_LIFETIME_S })
  const shared: Array<Run> = []
  const alone: Array<Run> = []
  try {
    for (let round = 0; round < rounds; round++) {
      context.log(`  fleet round ${round + 1}/${rounds}`)
      // alternate which goes first
      if (round % 2 === 0) {
        shared.push(await run(emulator, processes, expiries, redis.url))
        alone.push(await run(emulator, processes, expiries, null))
      } else {
        alone.push(await run(emulator, processes, expiries, null))
        shared.push(await run(emulator, processes, expiries, redis.url))
      }
    }
  } finally {
    await emulator.close()
    redis.stop()
  }
  const failover = context.quick ? undefined : await measureFailover(binary, context)
  const perExpiry = (runs: ReadonlyArray<Run>) => runs.map((one) => one.requests / one.expiries)
  const waits = (runs: ReadonlyArray<Run>) => runs.map((one) => p99(one.waits))
  const sharedPerExpiry = perExpiry(shared)
  const alonePerExpiry = perExpiry(alone)
  return {
    title,
    figures: [
      figure(
        {
          label: `token requests per expiry, ${processes} processes × ${CALLERS} callers`,
          value: median(sharedPerExpiry),
          unit: "requests"
        },
        {
          baseline: { label: "each process on its own memory cache", value: median(alonePerExpiry), unit: "requests" },
          ratio: ratioOf(sharedPerExpiry, alonePerExpiry),
          target: { on: "value", op: "<=", limit: 1.5 }
        }
      ),
      figure(
        { label: "p99 wait at an expiry (calls not served from memory)", value: median(waits(shared)), unit: "ms" },
        {
          baseline: { label: "each process renewing on its own", value: median(waits(alone)), unit: "ms" },
          ratio: ratioOf(waits(shared), waits(alone))
        }
      ),
      ...(failover?.figures ?? [])
    ],
    notes: [
      `tokens live ${TOKEN_LIFETIME_S} s and are renewed 1 s early: an expiry every 2 s; ${expiries} expiries plus the cold fetch per run, ${rounds} rounds`,
      "a shared renewal waits for the cross-process lock (polled every 50 ms, jittered) on top of the token request",
      `calls: ${shared.reduce((sum, one) => sum + one.calls, 0)} shared, ${alone.reduce((sum, one) => sum + one.calls, 0)} alone`,
      failover?.note ?? "failover: full runs only (not --quick)"
    ],
    data: {
      failover: failover?.data,
      shared: shared.map(({ waits: all, ...rest }) => ({ ...rest, waitCount: all.length, p99: p99(all) })),
      alone: alone.map(({ waits: all, ...rest }) => ({ ...rest, waitCount: all.length, p99: p99(all) }))
    }
  }
}

const FAILOVER_PROCESSES = 4
const FAILOVER_EXPIRIES = 4

/**
 * The failover figure: runs on a Sentinel group, the master SIGKILLed 2 s in (a fresh group each time), against runs
 * on a group left alone. The longest call is the longest wait of any caller (the client's default 5 s
 * `commandTimeout` lets callers wait through a failover shorter than that).
 */
const measureFailover = async (binary: string, context: Context) => {
  const emulator = await startWorkerEmulator({ tokenLatencyMs: 20, tokenLifetime: TOKEN_LIFETIME_S })
  const killed: Array<number> = []
  const withKill: Array<Run> = []
  const steady: Array<Run> = []
  try {
    for (let round = 0; round < 2; round++) {
      context.log(`  failover round ${round + 1}/2`)
      for (const kill of round % 2 === 0 ? [true, false] : [false, true]) {
        const group = await startSentinelGroup(binary)
        try {
          const runs = kill ? withKill : steady
          runs.push(await run(emulator, FAILOVER_PROCESSES, FAILOVER_EXPIRIES, null, { group, kill, killed }))
        } finally {
          group.stop()
        }
      }
    }
  } finally {
    await emulator.close()
  }
  const perExpiry = (runs: ReadonlyArray<Run>) => runs.map((one) => one.requests / one.expiries)
  const longest = (runs: ReadonlyArray<Run>) => runs.map((one) => Math.max(0, ...one.waits))
  return {
    figures: [
      figure(
        {
          label: `token requests per expiry around a Sentinel master kill, ${FAILOVER_PROCESSES} processes`,
          value: median(perExpiry(withKill)),
          unit: "requests" as const
        },
        {
          baseline: { label: "the same fleet, no kill", value: median(perExpiry(steady)), unit: "requests" },
          ratio: ratioOf(perExpiry(withKill), perExpiry(steady))
        }
      ),
      figure(
        { label: "longest call around a Sentinel master kill", value: median(longest(withKill)), unit: "ms" as const },
        {
          baseline: { label: "the same fleet, no kill", value: median(longest(steady)), unit: "ms" },
          ratio: ratioOf(longest(withKill), longest(steady))
        }
      )
    ],
    note: `failover: the master SIGKILLed 2 s into a ${FAILOVER_EXPIRIES}-expiry run; the sentinels promoted the replica after ${killed.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")} (down-after-milliseconds 1 s)`,
    data: {
      failoverMs: killed,
      withKill: withKill.map(({ waits: all, ...rest }) => ({ ...rest, longest: Math.max(0, ...all) })),
      steady: steady.map(({ waits: all, ...rest }) => ({ ...rest, longest: Math.max(0, ...all) }))
    }
  }
}
