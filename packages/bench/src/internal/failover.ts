/**
 * A Sentinel group for part 8's failover figure: a redis-server master, its replica and 3 sentinels on 127.0.0.1
 * (free ports, `down-after-milliseconds` 1 s), and the master SIGKILLed on demand.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redis } from "ioredis"

export const MASTER_NAME = "bench-master"

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** A loopback port that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const until = async (what: string, check: () => Promise<boolean>, millis: number) => {
  const end = performance.now() + millis
  while (performance.now() < end) {
    try {
      if (await check()) return
    } catch {
      // not answering yet
    }
    await sleep(100)
  }
  throw new Error(`${what}: not within ${millis / 1000} s`)
}

const admin = (port: number) => {
  const client = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 0, retryStrategy: () => 200 })
  client.on("error", () => {})
  return client
}

export interface SentinelGroup {
  readonly sentinels: ReadonlyArray<{ host: string; port: number }>
  /** SIGKILLs the master; resolves to how long (ms) until the sentinels name the promoted replica */
  readonly killMaster: () => Promise<number>
  readonly stop: () => void
}

export const startSentinelGroup = async (binary: string): Promise<SentinelGroup> => {
  const dir = mkdtempSync(join(tmpdir(), "bench-sentinel-"))
  const children: Array<ChildProcess> = []
  const clients: Array<Redis> = []
  const stop = () => {
    for (const client of clients) client.disconnect()
    for (const child of children) child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  }
  const server = async (port: number, args: ReadonlyArray<string>) => {
    children.push(spawn(binary, [...args], { stdio: "ignore" }))
    const client = admin(port)
    clients.push(client)
    await until(`${binary} on ${port}`, async () => (await client.ping()) === "PONG", 30_000)
    return client
  }
  const common = (port: number) => ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""]
  try {
    const masterPort = await freePort()
    const master = children.length
    await server(masterPort, common(masterPort))
    const replicaPort = await freePort()
    const replica = await server(replicaPort, [
      ...common(replicaPort),
      "--replicaof",
      "127.0.0.1",
      String(masterPort),
      "--dbfilename",
      "replica.rdb"
    ])
    const sentinels: Array<{ host: string; port: number }> = []
    const sentinelClients: Array<Redis> = []
    for (let index = 0; index < 3; index++) {
      const port = await freePort()
      const conf = join(dir, `sentinel-${port}.conf`)
      writeFileSync(
        conf,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
          `sentinel failover-timeout ${MASTER_NAME} 4000`,
          ""
        ].join("\n")
      )
      sentinelClients.push(await server(port, [conf, "--sentinel"]))
      sentinels.push({ host: "127.0.0.1", port })
    }
    await until(
      "the sentinels knowing each other and the replica",
      async () => {
        for (const sentinel of sentinelClients) {
          const others = (await sentinel.call("SENTINEL", "SENTINELS", MASTER_NAME)) as Array<unknown>
          const replicas = (await sentinel.call("SENTINEL", "REPLICAS", MASTER_NAME)) as Array<unknown>
          if (others.length < 2 || replicas.length < 1) return false
        }
        return true
      },
      60_000
    )
    const killMaster = async () => {
      const killed = performance.now()
      children[master]!.kill("SIGKILL")
      await until(
        "the failover",
        async () => {
          const named = (await sentinelClients[0]!.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as [
            string,
            string
          ]
          return Number(named[1]) === replicaPort && String(await replica.call("ROLE")).startsWith("master")
        },
        60_000
      )
      return performance.now() - killed
    }
    return { sentinels, killMaster, stop }
  } catch (error) {
    stop()
    throw error
  }
}
