/**
 * A redis-server that speaks only TLS (a self-signed certificate made with `openssl`), for the TLS-mismatch tests;
 * undefined, with the reason, when there is no redis-server, no openssl, or a redis-server built without TLS.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:tls"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { findRedisServer, freePort } from "./redisServer.js"

export interface TlsRedisServer {
  readonly port: number
  readonly stop: () => Promise<void>
}

const handshake = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false })
    socket.once("secureConnect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

export const startTlsRedisServer = async (): Promise<TlsRedisServer | string> => {
  const binary = findRedisServer()
  if (binary === undefined) return "no redis-server"
  const dir = mkdtempSync(join(tmpdir(), "service-sdk-tls-"))
  const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")]
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1"
      ],
      { stdio: "ignore", timeout: 30_000 }
    )
  } catch {
    rmSync(dir, { recursive: true, force: true })
    return "no openssl to make a certificate"
  }
  const port = await freePort()
  const child: ChildProcess = spawn(
    binary,
    [
      ...["--port", "0", "--tls-port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ...["--tls-cert-file", cert, "--tls-key-file", key, "--tls-auth-clients", "no", "--dir", dir]
    ],
    { stdio: "ignore" }
  )
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) break
    if (await handshake(port)) return { port, stop }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stop()
  return "redis-server does not take --tls-port (built without TLS)"
}
