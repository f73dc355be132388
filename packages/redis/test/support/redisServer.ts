/**
 * A throwaway `redis-server` on 127.0.0.1 for the tests (no persistence), and the suite wrapper that skips loudly
 * when none is installed — or fails, when SERVICE_SDK_REQUIRE_REDIS=1 (CI).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { accessSync, constants, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { delimiter, join } from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import { Redis } from "ioredis"

export interface RedisServer {
  readonly port: number
  readonly url: string
  /** A client of the test's own, for looking at keys. */
  readonly admin: Redis
}

const isExecutable = (path: string) => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** $SERVICE_SDK_REDIS_SERVER when set, else `redis-server` on PATH, else /usr/bin/redis-server, else undefined. */
export const findRedisServer = (): string | undefined => {
  const chosen = process.env.SERVICE_SDK_REDIS_SERVER
  if (chosen !== undefined && chosen !== "") return isExecutable(chosen) ? chosen : undefined
  return [...(process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== ""), "/usr/bin"]
    .map((dir) => join(dir, "redis-server"))
    .find(isExecutable)
}

/** A port that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

/** Where the kernel's ephemeral ports (the source ports of outgoing connections) start. */
const ephemeralStart = (): number => {
  try {
    const start = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])
    return Number.isInteger(start) && start > 21_000 ? start : 32_768
  } catch {
    return 32_768
  }
}

const listens = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/**
 * A port for a Redis Cluster node, which also listens on port + 10000 (its bus): both below the ephemeral range and
 * tried first. A kernel-picked port put the bus in that range, where one of the suite's loopback connections once
 * held it as its source port ("Could not create server TCP listening socket 127.0.0.1:46537").
 */
export const freeClusterPort = async (): Promise<number> => {
  const end = ephemeralStart() - 10_000
  for (let tries = 0; tries < 100; tries++) {
    const port = 10_000 + Math.floor(Math.random() * (end - 10_000))
    if ((await listens(port)) && (await listens(port + 10_000))) return port
  }
  throw new Error("no free port pair (port, port + 10000) below the ephemeral range after 100 tries")
}

const waitForExit = (child: ChildProcess, millis: number) =>
  new Promise<boolean>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true)
    const timer = setTimeout(() => resolve(false), millis)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

const start = async (binary: string): Promise<{ readonly server: RedisServer; readonly stop: () => Promise<void> }> => {
  const port = await freePort()
  const child = spawn(
    binary,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  child.stdout?.on("data", (chunk) => {
    output += String(chunk)
  })
  child.stderr?.on("data", (chunk) => {
    output += String(chunk)
  })
  const admin = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null
  })
  admin.on("error", () => {})
  const stop = async () => {
    admin.disconnect()
    child.kill("SIGTERM")
    if (!(await waitForExit(child, 5000))) {
      child.kill("SIGKILL")
      await waitForExit(child, 5000)
    }
  }
  // Ready when a PING answers; give up after 10 s or when the server exits.
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${output}`)
    try {
      if (admin.status !== "wait") admin.disconnect()
      await admin.connect()
      if ((await admin.ping()) === "PONG") break
    } catch (error) {
      if (attempt >= 100) {
        await stop()
        throw new Error(`redis-server on port ${port} did not answer: ${String(error)} ${output}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return { server: { port, url: `redis://127.0.0.1:${port}`, admin }, stop }
}

const binary = findRedisServer()
const required = process.env.SERVICE_SDK_REQUIRE_REDIS === "1"

/**
 * A suite against its own redis-server. Without redis-server it is skipped with a warning, or, when
 * SERVICE_SDK_REQUIRE_REDIS=1, replaced by a failing test.
 */
export const describeRedis = (name: string, body: (server: () => RedisServer) => void): void => {
  if (binary === undefined) {
    const reason =
      "no redis-server ($SERVICE_SDK_REDIS_SERVER, on PATH or at /usr/bin/redis-server; install it: apt-get install redis-server)"
    if (required) {
      describe(name, () => {
        it("needs redis-server because SERVICE_SDK_REQUIRE_REDIS=1", () => {
          throw new Error(`cannot run the Redis tests: ${reason}`)
        })
      })
      return
    }
    console.warn(
      `\n*** SKIPPING the Redis tests "${name}": ${reason}. Set SERVICE_SDK_REQUIRE_REDIS=1 to fail instead. ***\n`
    )
  }
  describe.skipIf(binary === undefined)(name, () => {
    let running: { readonly server: RedisServer; readonly stop: () => Promise<void> } | undefined
    beforeAll(async () => {
      running = await start(binary!)
    })
    afterAll(async () => {
      await running?.stop()
    })
    body(() => {
      if (running === undefined) throw new Error("redis-server is not running")
      return running.server
    })
  })
}
