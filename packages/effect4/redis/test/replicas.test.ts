/**
 * Writes that outlive a failover, on a master with a replica: a write waits for the replica to confirm it (`WAIT`);
 * one the replica did not confirm (it is stopped) is kept by the process that made it, and written again when the
 * entry went back to an older token of the same client (what a failover to a lagging replica does).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { RedisTokenCache } from "@service-sdk/redis"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import { Redis } from "ioredis"
import { TokenInfo } from "@service-sdk/effect"
import { describeRedis, findRedisServer, freePort } from "../../../redis/test/support/redisServer.js"

const token = (accessToken: string, expiresAt: number) =>
  new TokenInfo({
    accessToken: Redacted.make(accessToken),
    refreshToken: Redacted.make(`${accessToken}-refresh`),
    expiresAt,
    clientId: "replica-client"
  })

describeRedis("writes with a replica (Effect 4)", (server) => {
  let replica: ChildProcess | undefined
  let replicaClient: Redis | undefined
  let dir: string | undefined
  beforeAll(async () => {
    const port = await freePort()
    // a replica writes the master's snapshot to its directory: a temporary one
    dir = mkdtempSync(join(tmpdir(), "service-sdk-replica-"))
    replica = spawn(
      findRedisServer()!,
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: "ignore" }
    )
    replicaClient = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0 })
    replicaClient.on("error", () => {})
    for (let attempt = 0; ; attempt++) {
      try {
        if (replicaClient.status !== "wait") replicaClient.disconnect()
        await replicaClient.connect()
        break
      } catch (error) {
        if (attempt > 100) throw error
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    await replicaClient.call("REPLICAOF", "127.0.0.1", String(server().port))
    for (let attempt = 0; attempt < 100; attempt++) {
      if (/master_link_status:up/.test(await replicaClient.info("replication"))) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error("the replica did not sync")
  }, 30_000)
  afterAll(async () => {
    replicaClient?.disconnect()
    replica?.kill("SIGCONT")
    replica?.kill("SIGKILL")
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it.live(
    "a write the replica did not confirm is kept, and written again when the entry went back to an older token",
    () =>
      Effect.gen(function* () {
        const key = `test4:replica:${randomUUID()}`
        const lines: Array<string> = []
        const capture = Logger.make(({ logLevel, message }) => {
          lines.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
        })
        const now = Date.now() / 1000
        yield* Effect.gen(function* () {
          const tokens = yield* RedisTokenCache.make({ url: server().url, key })
          // confirmed: the replica has it when the write returns
          yield* tokens.set(token("first", now + 3600))
          expect(JSON.parse((yield* Effect.promise(() => replicaClient!.get(key))) ?? "{}").access_token).toBe("first")

          // the replica stops: the write returns after a short wait, and this process keeps it
          replica!.kill("SIGSTOP")
          const started = Date.now()
          yield* tokens.set(token("rotated", now + 7200))
          expect(Date.now() - started).toBeLessThan(5000)
          expect(lines.some((line) => line.startsWith("Warn") && line.includes("keeps it until one does"))).toBe(true)

          // a failover to a lagging replica brings the older token back: the kept write lands again
          yield* Effect.promise(() =>
            server().admin.set(
              key,
              JSON.stringify({
                access_token: "first",
                expires_at: now + 3600,
                refresh_token: "first-refresh",
                client_id: "replica-client"
              })
            )
          )
          for (let waited = 0; waited < 3000; waited += 50) {
            const current = JSON.parse((yield* Effect.promise(() => server().admin.get(key))) ?? "{}")
            if (current.access_token === "rotated") break
            yield* Effect.sleep("50 millis")
          }
          expect(JSON.parse((yield* Effect.promise(() => server().admin.get(key))) ?? "{}").access_token).toBe(
            "rotated"
          )
          expect(lines.some((line) => line.includes("had gone back to an older token"))).toBe(true)
          replica!.kill("SIGCONT")
        }).pipe(Effect.scoped, Effect.provide(Logger.layer([capture])))
      }),
    30_000
  )
})
