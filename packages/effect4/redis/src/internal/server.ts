/**
 * What the cache checks about the server when it connects: a TLS mismatch between the URL and the server (found
 * out at once, with a ConfigurationError that names it), whether it has replicas, and an eviction policy that may
 * evict the SDK's keys (a warning: an evicted entry signs its user out). The same checks as the Effect 3 line's.
 */
import { connect as connectTcp } from "node:net"
import { connect as connectTls } from "node:tls"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError } from "@service-sdk/effect"
import type { Connection } from "./connection.js"

/** How long a probe of the server's protocol waits for an answer. */
const PROBE_TIMEOUT = 1000
/** How long a `rediss://` connection may stall before the server is asked whether it speaks plain Redis. */
const TLS_STALL = Duration.millis(300)

const target = (url: string) => {
  const parsed = new URL(url)
  return { host: parsed.hostname.replace(/^\[|\]$/g, ""), port: Number(parsed.port === "" ? 6379 : parsed.port) }
}

/** Opens a socket, and resolves to `answer(socket event)`, or false on error, close or after the probe timeout. */
const probe = (
  open: () => import("node:net").Socket,
  listen: (socket: import("node:net").Socket, done: (answer: boolean) => void) => void
): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = open()
    const done = (answer: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(answer)
    }
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT)
    listen(socket, done)
    socket.once("error", () => done(false))
    socket.once("close", () => done(false))
  })

/** Whether the server answers a plain `PING` in RESP (it is no TLS server). */
const speaksPlainRedis = (host: string, port: number) =>
  probe(
    () => connectTcp({ host, port }),
    (socket, done) => {
      socket.once("connect", () => socket.write("PING\r\n"))
      socket.once("data", (data: Buffer) => done(/^[+\-:$*]/.test(data.toString("latin1", 0, 1))))
    }
  )

/** Whether the server completes a TLS handshake (whatever its certificate). */
const speaksTls = (host: string, port: number) =>
  probe(
    () =>
      connectTls({ host, port, rejectUnauthorized: false, ...(/^[\d.:]+$/.test(host) ? {} : { servername: host }) }),
    (socket, done) => socket.once("secureConnect", () => done(true))
  )

/**
 * `rediss://` to a server that answers plain RESP: the ConfigurationError, as soon as the TLS handshake has stalled a
 * moment. Never completes otherwise: it runs beside the connection attempt.
 */
export const plainServer = (url: string, address: string): Effect.Effect<ConfigurationError> =>
  Effect.gen(function* () {
    if (!url.startsWith("rediss:")) return yield* Effect.never
    yield* Effect.sleep(TLS_STALL)
    const { host, port } = target(url)
    if (!(yield* Effect.promise(() => speaksPlainRedis(host, port)))) return yield* Effect.never
    return new ConfigurationError({
      message:
        `the Redis url asks for TLS (rediss://) but the server at ${address} speaks plain Redis, without TLS: ` +
        "use redis://, or enable TLS on the server (tls-port)"
    })
  })

/**
 * After a plain connection (`redis://`) failed: the ConfigurationError when the server completes a TLS handshake,
 * else undefined.
 */
export const tlsServer = (url: string, address: string): Effect.Effect<ConfigurationError | undefined> =>
  Effect.gen(function* () {
    if (!url.startsWith("redis:")) return undefined
    const { host, port } = target(url)
    if (!(yield* Effect.promise(() => speaksTls(host, port)))) return undefined
    return new ConfigurationError({
      message:
        `the Redis url asks for a plain connection (redis://) but the server at ${address} speaks TLS: ` +
        "use rediss:// (or turn the server's plain port on)"
    })
  })

/** `INFO` of every master (a Cluster's, or the one server). */
const masterInfos = (client: Redis | Cluster): Promise<ReadonlyArray<string>> => {
  const servers: ReadonlyArray<Redis> = client.isCluster ? (client as Cluster).nodes("master") : [client as Redis]
  return Promise.all(servers.map((server) => server.info()))
}

const field = (info: string, name: string) => new RegExp(`^${name}:(\\S+)`, "m").exec(info)?.[1]

/**
 * What the cache learns of the servers when it connects: whether a master has replicas (then a write waits for one
 * to confirm it, see `durable.ts`), and a warning when the server may evict the SDK's keys: any `allkeys-*` policy
 * evicts keys without an expiry (a signed-in user's entry) once `maxmemory` is reached. A server that does not say
 * (INFO refused) is not warned about.
 */
export const inspect = (client: Redis | Cluster, connection: Connection): Effect.Effect<void> =>
  connection
    .run("INFO", () => masterInfos(client))
    .pipe(
      Effect.flatMap((infos) => {
        if (infos.some((info) => Number(field(info, "connected_slaves") ?? 0) > 0)) connection.health.replicated = true
        const policies = infos.flatMap((info) => field(info, "maxmemory_policy") ?? [])
        const evicting = [...new Set(policies.filter((policy) => policy.startsWith("allkeys-")))]
        if (evicting.length === 0) return Effect.void
        return Effect.logWarning(
          `Redis at ${connection.address} has maxmemory-policy ${evicting.join(", ")}: when it is full it evicts any ` +
            "key, a signed-in user's tokens too (that user is signed out). Set maxmemory-policy to noeviction or a " +
            "volatile-* policy (CONFIG SET maxmemory-policy noeviction, and in redis.conf), or keep the tokens on a " +
            "Redis of their own"
        )
      }),
      Effect.catch((error) => Effect.logDebug(`cannot read the Redis server's INFO: ${error.message}`))
    )
