import { readFileSync } from "node:fs"
import * as Net from "node:net"

/**
 * Where the kernel's ephemeral ports start (the source ports of outgoing connections): a port picked below it is not
 * taken by one of the suite's many loopback connections between the pick and the CLI's `listen`.
 */
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
    const server = Net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/**
 * A loopback port for the CLI's `--port` (the loopback redirect) that was free a moment ago: random below the
 * ephemeral range, and tried (a random port in that range once collided with a connection's source port).
 */
export const freePort = async (): Promise<number> => {
  const end = ephemeralStart()
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * (end - 20_000))
    if (await listens(port)) return port
  }
  throw new Error("no free loopback port below the ephemeral range after 50 tries")
}

/** {@link freePort} as a command-line argument. */
export const freePortArg = async (): Promise<string> => String(await freePort())
