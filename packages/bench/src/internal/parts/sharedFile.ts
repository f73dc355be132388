/**
 * Part 11. One token file shared by the processes of one machine (several CLI invocations, web-app workers): N
 * processes (8; 2 in quick mode) × 50 callers on one client whose tokens live 3 s and are renewed 1 s early (an
 * expiry every 2 s). Three runs alternate, each from cold for the same time: the processes sharing `TokenCache.file`
 * (its lock file and compare-and-set), the same file without them (`get`/`set` only: the baseline, N requests per
 * expiry), and a shared `RedisTokenCache` (the fleet's figure, beside it; skipped without redis-server). Figure:
 * token requests per expiry of all the processes together (target 1).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Context } from "../context.js"
import { startWorkerEmulator } from "../emulator.js"
import { median, ratioOf } from "../harness.js"
import { figure } from "../report.js"
import { CALLERS, type Run, redisServerBinary, run, startRedis, TOKEN_LIFETIME_S } from "./fleet.js"
import type { PartResult } from "./part.js"

export const sharedFile = async (context: Context): Promise<PartResult> => {
  const title = "One token file across OS processes: with its lock and compare-and-set, against without"
  const processes = context.quick ? 2 : 8
  const expiries = context.quick ? 1 : 3
  const rounds = context.quick ? 1 : 3
  // the Redis figure is part 8's business in a quick run (a smoke test): skipped there
  const binary = context.quick ? undefined : redisServerBinary()
  const redis = binary === undefined ? undefined : await startRedis(binary)
  const emulator = await startWorkerEmulator({ tokenLatencyMs: 20, tokenLifetime: TOKEN_LIFETIME_S })
  const dir = mkdtempSync(join(tmpdir(), "bench-shared-file-"))
  const locked: Array<Run> = []
  const unlocked: Array<Run> = []
  const fleet: Array<Run> = []
  try {
    for (let round = 0; round < rounds; round++) {
      context.log(`  shared file round ${round + 1}/${rounds}`)
      const path = (name: string) => join(dir, `${name}-${round}.json`)
      const runs = [
        async () => locked.push(await run(emulator, processes, expiries, null, { path: path("locked"), lock: true })),
        async () =>
          unlocked.push(await run(emulator, processes, expiries, null, { path: path("unlocked"), lock: false })),
        async () => {
          if (redis !== undefined) fleet.push(await run(emulator, processes, expiries, redis.url))
        }
      ]
      // rotate which goes first
      for (let i = 0; i < runs.length; i++) await runs[(i + round) % runs.length]!()
    }
  } finally {
    await emulator.close()
    redis?.stop()
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
      ),
      ...(fleet.length === 0
        ? []
        : [
            figure({
              label: `token requests per expiry, the same processes on RedisTokenCache`,
              value: median(perExpiry(fleet)),
              unit: "requests"
            })
          ])
    ],
    notes: [
      `tokens live ${TOKEN_LIFETIME_S} s and are renewed 1 s early: an expiry every 2 s; ${expiries} expiries plus the cold fetch per run, ${rounds} rounds`,
      "the lock file is polled every 20–60 ms by a waiting process; the Redis lock every 50 ms (jittered)",
      ...(redis === undefined ? ["the Redis figure is skipped (a quick run, or no redis-server on PATH)"] : [])
    ],
    data: Object.fromEntries(
      Object.entries({ locked, unlocked, redis: fleet }).map(([name, runs]) => [
        name,
        runs.map(({ waits, ...rest }) => ({ ...rest, waitCount: waits.length }))
      ])
    )
  }
}
