/**
 * A mixed fleet on one Redis: OS processes of the Effect 3 line (on the machine's Node, the built 1.x packages) and
 * of the Effect 4 line (on the Node this project installs, the built 2.x packages) share one `RedisTokenStore` (its
 * keys, stored JSON, lock and Lua scripts) against the emulator rotating refresh tokens (a rotated-out one is
 * invalid_grant): one refresh per user per expiry for the whole fleet, no invalid_grant, every user served their own
 * tokens.
 */
import { execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { RedisTokenStore } from "@service-sdk/redis"
import { type RunningEmulator, startEmulator } from "../../service-sdk/test/support/emulator.js"
import { describeRedis } from "../../../redis/test/support/redisServer.js"

const root = join(import.meta.dirname, "..", "..", "..", "..")
const workers = {
  3: join(root, "packages", "redis", "test", "mixedFleet", "worker-effect3.mjs"),
  4: join(import.meta.dirname, "mixedFleet", "worker-effect4.mjs")
} as const
/** The Effect 3 line runs on the machine's Node (`node` on PATH, or $SERVICE_SDK_EFFECT3_NODE). */
const effect3Node = process.env.SERVICE_SDK_EFFECT3_NODE ?? "node"

interface Report {
  readonly line: 3 | 4
  readonly node: string
  readonly calls: number
  readonly tokens: Readonly<Record<string, ReadonlyArray<string>>>
  readonly me: Readonly<Record<string, string>>
  readonly errors: ReadonlyArray<string>
}

const runWorker = (line: 3 | 4, config: Record<string, unknown>) =>
  new Promise<Report>((resolve, reject) => {
    const child = spawn(line === 3 ? effect3Node : process.execPath, [workers[line], JSON.stringify(config)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk
    })
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      try {
        if (code !== 0) throw new Error(`exit ${code}`)
        resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "") as Report)
      } catch (error) {
        reject(new Error(`worker (Effect ${line}) failed: ${String(error)}\n${out}\n${err}`))
      }
    })
  })

describeRedis("mixed fleet on one Redis (Effect 3 and Effect 4 processes)", (server) => {
  let emulator: RunningEmulator | undefined
  beforeAll(async () => {
    // the workers and the emulator run on the built packages (incremental: about a second when nothing changed)
    execFileSync(
      join(root, "node_modules", ".bin", "tsc"),
      ["-b", join(root, "packages", "redis"), join(root, "packages", "emulator"), join(root, "packages", "effect4")],
      { stdio: "pipe" }
    )
    emulator = await startEmulator(["--rotate-refresh-tokens", "--token-lifetime", "2"])
  }, 180_000)
  afterAll(async () => {
    await emulator?.stop()
  })

  it("one refresh per user per expiry, no invalid_grant, every user's tokens their own", {
    timeout: 180_000
  }, async () => {
    const running = emulator!
    const prefix = `test4:mixed:${randomUUID()}:`
    const users = ["mixed-alice", "mixed-bob"]
    for (const user of users) {
      const signedIn = await running.signIn({ userId: user })
      const now = Date.now() / 1000
      await server().admin.set(
        RedisTokenStore.userKey(prefix, user),
        JSON.stringify({
          access_token: signedIn.access_token,
          expires_at: now + signedIn.expires_in,
          refresh_token: signedIn.refresh_token,
          client_id: running.clientId,
          auth_url: running.authUrl,
          issued_at: now
        })
      )
    }
    const before = await running.stats()
    const durationMs = 7_000
    const config = {
      redisUrl: server().url,
      prefix,
      users,
      authUrl: running.authUrl,
      apiUrl: running.apiUrl,
      clientId: running.clientId,
      clientSecret: running.clientSecret,
      // a 2 s token is short-lived against this skew: renewed half-way, once a second per user
      skew: "5 seconds",
      durationMs,
      pauseMs: 40
    }
    const reports = await Promise.all([
      runWorker(3, config),
      runWorker(4, config),
      runWorker(3, config),
      runWorker(4, config)
    ])
    const after = await running.stats()
    const refreshes = (after.tokenRequests.refresh_token ?? 0) - (before.tokenRequests.refresh_token ?? 0)
    const served = Object.fromEntries(
      users.map((user) => [user, new Set(reports.flatMap((r) => r.tokens[user] ?? []))])
    )
    console.info(
      `mixed fleet (Redis): ${refreshes} refreshes for ${users.length} users in ${durationMs / 1000} s, ` +
        `tokens served: ${users.map((u) => served[u]!.size).join("+")}, ` +
        `calls: ${reports.map((r) => `E${r.line}@${r.node}=${r.calls}`).join(" ")}`
    )
    for (const report of reports) {
      expect(report.errors, `Effect ${report.line} worker errors`).toEqual([])
      expect(report.calls).toBeGreaterThan(10)
      // every user's token is that user's, in every process of both lines
      expect(report.me).toEqual(Object.fromEntries(users.map((user) => [user, user])))
      for (const user of users) expect(report.tokens[user]!.length).toBeGreaterThanOrEqual(2)
    }
    // the two lines ran on their own Nodes
    for (const report of reports.filter((r) => r.line === 4)) {
      const [major, minor] = report.node.slice(1).split(".").map(Number)
      expect(major! > 22 || (major === 22 && minor! >= 19)).toBe(true)
    }
    // no token went to two users; every token served came from one of the fleet's refreshes (or the sign-in)
    const [alice, bob] = users.map((user) => served[user]!)
    expect([...alice!].filter((token) => bob!.has(token))).toEqual([])
    expect(alice!.size + bob!.size).toBeLessThanOrEqual(refreshes + users.length)
    // renewals happen about once a second per user for the whole fleet, never once per process
    expect(refreshes).toBeGreaterThanOrEqual(2 * users.length)
    expect(refreshes).toBeLessThanOrEqual(users.length * (Math.ceil(durationMs / 1000) + 3))
    // the store still holds each user's login, unmarked, in the one stored format
    for (const user of users) {
      const entry = JSON.parse((await server().admin.get(RedisTokenStore.userKey(prefix, user))) ?? "{}")
      expect(typeof entry.refresh_token).toBe("string")
      expect(entry.refresh_rejected).toBeUndefined()
      expect(entry.client_id).toBe(running.clientId)
    }
  })
})
