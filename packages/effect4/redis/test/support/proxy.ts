/**
 * A TCP proxy on 127.0.0.1 in front of a Redis server, that a test can cut: `cut()` drops every connection and
 * refuses new ones (Redis away, as in a failover), `restore()` lets connections through again.
 */
import { createServer, type Socket, connect } from "node:net"

export interface Proxy {
  readonly port: number
  readonly url: string
  readonly cut: () => void
  readonly restore: () => void
  readonly close: () => Promise<void>
}

export const startProxy = (targetPort: number): Promise<Proxy> =>
  new Promise((resolve, reject) => {
    let cut = false
    const sockets = new Set<Socket>()
    const track = (socket: Socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
      socket.on("error", () => {})
    }
    const server = createServer((client) => {
      track(client)
      if (cut) return void client.destroy()
      const upstream = connect(targetPort, "127.0.0.1")
      track(upstream)
      client.pipe(upstream).pipe(client)
      client.once("close", () => upstream.destroy())
      upstream.once("close", () => client.destroy())
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (typeof address !== "object" || address === null) return reject(new Error("no port"))
      resolve({
        port: address.port,
        url: `redis://127.0.0.1:${address.port}`,
        cut: () => {
          cut = true
          for (const socket of sockets) socket.destroy()
        },
        restore: () => {
          cut = false
        },
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
