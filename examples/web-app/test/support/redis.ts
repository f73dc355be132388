/** A throwaway `redis-server` on 127.0.0.1 (no persistence) for the Redis test, skipped loudly when none exists. */
import { type ChildProcess, spawn } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { createServer } from "node:net"
import { delimiter, join } from "node:path"

const isExecutable = (path: string) => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** `redis-server` on PATH or in /usr/bin, if any. */
export const redisServerBinary: string | undefined = [
  ...(process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== ""),
  "/usr/bin"
]
  .map((dir) => join(dir, "redis-server"))
  .find(isExecutable)

const freePort = (): Promise<number> =>
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

/** Starts redis-server and resolves once it accepts commands; `stop` kills it. */
export const startRedis = async (
  binary: string
): Promise<{ readonly url: string; readonly stop: () => Promise<void> }> => {
  const port = await freePort()
  const child: ChildProcess = spawn(
    binary,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("redis-server did not start within 10 s")), 10_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited with ${code}`))
    })
  })
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGKILL")
      })
  }
}
