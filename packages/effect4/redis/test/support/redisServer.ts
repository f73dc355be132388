/** A real redis-server on a free loopback port, for one test file (skipped loudly when none is installed). */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createServer } from "node:net"

const binary = process.env.SERVICE_SDK_REDIS_SERVER ?? "redis-server"

export const redisAvailable = (() => {
  try {
    execFileSync(binary, ["--version"], { stdio: "pipe" })
    return true
  } catch {
    if (process.env.SERVICE_SDK_REQUIRE_REDIS === "1") throw new Error(`${binary} is required but not installed`)
    console.warn(`SKIPPED: the Effect 4 Redis tests need ${binary} (not installed)`)
    return false
  }
})()

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

export interface RunningRedis {
  readonly url: string
  readonly stop: () => Promise<void>
}

export const startRedis = async (): Promise<RunningRedis> => {
  const port = await freePort()
  const child: ChildProcess = spawn(
    binary,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 15_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk
      if (/Ready to accept connections/i.test(output)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)))
  })
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}
