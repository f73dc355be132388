/**
 * The Redis connection as the cache uses it: an owned connection (from a URL, closed with the scope) or a borrowed
 * client, its address without credentials for messages, and every command bounded by a timeout with its failures
 * mapped to `TokenCacheError`.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError, TokenCacheError } from "@service-sdk/effect"
import * as Peer from "./peer.js"
import * as RedisClient from "@service-sdk/shared/redisClient"
import { type ReplicationIds, SCRIPTS, type ScriptName } from "@service-sdk/shared/redisProtocol"
import * as Server from "./server.js"

/** The commands the cache sends; ioredis' `Redis` and `Cluster` both have them. */
export interface Commands {
  info(section: string): Promise<string>
  /** A pipeline goes to the node of its keyed commands: `WAIT` after a keyed one asks that key's master. */
  pipeline(commands: Array<Array<string | number>>): {
    exec(): Promise<Array<[Error | null, unknown]> | null>
  }
}

/** Defines the scripts on a client (once: a borrowed client may serve several caches). */
const defineScripts = (client: Redis | Cluster) => {
  for (const [name, definition] of Object.entries(SCRIPTS)) {
    if (typeof (client as unknown as Record<string, unknown>)[name] !== "function") {
      client.defineCommand(name, definition)
    }
  }
}

/** Runs a script defined by {@link defineScripts}. */
export const script = (
  commands: Commands,
  name: ScriptName,
  key: string,
  ...args: ReadonlyArray<string | number>
): Promise<unknown> =>
  (commands as unknown as Record<ScriptName, (...args: ReadonlyArray<string | number>) => Promise<unknown>>)[name](
    key,
    ...args
  )

export interface Connection {
  /** Where the cache lives, for messages: `redis://host:port/db`, never a user name or password. */
  readonly address: string
  /** Runs one command; a failure or a reply later than the command timeout is a TokenCacheError. */
  readonly run: <A>(what: string, command: (commands: Commands) => Promise<A>) => Effect.Effect<A, TokenCacheError>
  /** What the connection has seen of its servers (see {@link Health}). */
  readonly health: Health
  /** The scope the connection lives in: background work of the cache (a write kept until confirmed) runs there. */
  readonly scope: Scope.Scope
}

/**
 * What the connection has seen: whether a server it wrote to had replicas (then a failover may lose acknowledged
 * writes), and when Redis was last away (a failed command, a closed connection): epoch ms, 0 for never.
 */
export interface Health {
  replicated: boolean
  awayAt: number
  /** The replication ids the lock tries met, and when each was first seen (`promotionWatch`). */
  readonly replids: ReplicationIds
}

/** How a key that holds another application's value is reported: a TokenCacheError naming the key. */
export const neighbour = (address: string, key: string, kind: string, ours: "token entry" | "lock") =>
  new TokenCacheError({ message: RedisClient.neighbourMessage(address, key, kind, ours) })

export const DEFAULT_URL = "redis://127.0.0.1:6379"

/** Redis' absences are measured in real time, whatever clock the caller's effects have: other processes see them. */
const liveClock = Clock.make()

/** `redis://host:port/db` (or `rediss://`) without credentials, query or fragment; ConfigurationError when invalid. */
export const parseUrl = (
  url: string
): Effect.Effect<{ readonly address: string; readonly password: string }, ConfigurationError> =>
  Effect.suspend(() => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return Effect.fail(new ConfigurationError({ message: `the Redis url is not a valid URL` }))
    }
    if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
      return Effect.fail(
        new ConfigurationError({
          message: `the Redis url must start with redis:// or rediss://, got ${parsed.protocol}`
        })
      )
    }
    const path = parsed.pathname === "/" ? "" : parsed.pathname
    return Effect.succeed({
      address: `${parsed.protocol}//${parsed.host}${path}`,
      password: decodeURIComponent(parsed.password)
    })
  })

/** The first pause between two tries of a command while Redis is away; it doubles up to {@link RETRY_MAX}. */
const RETRY_FIRST = 25
const RETRY_MAX = 250

const makeRun = (
  client: Redis | Cluster,
  address: string,
  timeout: Duration.Duration,
  secrets: ReadonlyArray<string>,
  health: Health
): Connection["run"] => {
  const commands = client as unknown as Commands
  const timeoutMillis = Duration.toMillis(timeout)
  // Set when a command waited its whole timeout for Redis in vain (a long outage): later commands try once and fail
  // at once, so a long outage costs one wait, not one per call; the next answer clears it.
  let away = false
  return (what, command) => {
    const failed = (cause: unknown, retriedMillis: number) =>
      new TokenCacheError({
        message:
          `Redis ${what} failed on ${address}: ${RedisClient.describeFailure(cause, secrets)}` +
          (retriedMillis > 0 ? ` (Redis away for ${Math.round(retriedMillis)} ms, given up)` : ""),
        cause: RedisClient.safeCause(cause, secrets)
      })
    // One behaviour while Redis is away (a failover, a reconnection): the command is tried again, with short pauses,
    // until an answer or its deadline (`commandTimeout`), then it is a TokenCacheError. A call thus waits out a short
    // failover instead of failing, and never waits longer than the command timeout for one command. Once a wait ran
    // out (`away`), commands fail at once until Redis answers one.
    const attempts = Effect.gen(function* () {
      const start = yield* Clock.currentTimeMillis
      let pause = RETRY_FIRST
      while (true) {
        const result = yield* Effect.either(
          Effect.tryPromise({ try: () => command(commands), catch: (cause) => cause })
        )
        if (result._tag === "Right") {
          away = false
          return result.right
        }
        const cause = result.left
        const now = yield* Clock.currentTimeMillis
        const elapsed = now - start
        const transient = RedisClient.isTransient(cause)
        if (transient) health.awayAt = liveClock.unsafeCurrentTimeMillis()
        const waitedOut = elapsed + pause >= timeoutMillis
        if (client.status === "end" || !transient || away || waitedOut) {
          if (transient && waitedOut) away = true
          return yield* Effect.fail(failed(cause, transient ? elapsed : 0))
        }
        yield* Effect.sleep(Duration.millis(pause))
        pause = Math.min(2 * pause, RETRY_MAX)
      }
    })
    // Interruptible even inside an uninterruptible region (the lock's acquire), so that the timeout can abandon a
    // command that never settles; the caller's own interruption still waits for the region's end.
    return Effect.interruptible(attempts).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () =>
          new TokenCacheError({
            message: `Redis ${what} on ${address} got no reply within ${Duration.format(timeout)}`
          })
      })
    )
  }
}

/**
 * Waits until a client is `ready` (connecting a lazy one), for at most `timeout`: a client that cannot connect (Redis
 * down, a Sentinel group nobody knows, a cluster without a quorum) is a TokenCacheError that says why, never a hang,
 * and the first call does not meet "Stream isn't writeable". A closed client is a ConfigurationError.
 */
const awaitReady = (
  client: Redis | Cluster,
  address: string,
  timeout: Duration.Duration,
  secrets: ReadonlyArray<string>
): Effect.Effect<void, TokenCacheError | ConfigurationError> =>
  Effect.suspend((): Effect.Effect<void, TokenCacheError | ConfigurationError> => {
    if (client.status === "ready") return Effect.void
    if (client.status === "end") {
      return Effect.fail(
        new ConfigurationError({
          message: `the Redis client for ${address} is closed (quit or disconnected): pass a client that is open`
        })
      )
    }
    let lastError: unknown
    return Effect.async<void>((resume) => {
      const onReady = () => resume(Effect.void)
      const onError = (error: unknown) => {
        lastError = error
      }
      client.once("ready", onReady)
      client.on("error", onError)
      client.on("sentinelError", onError)
      if (client.status === "wait") client.connect().catch(onError)
      return Effect.sync(() => {
        client.off("ready", onReady)
        client.off("error", onError)
        client.off("sentinelError", onError)
      })
    }).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => {
          const reason =
            lastError === undefined
              ? `status ${client.status}`
              : /invalid reply: null|No such master/.test(RedisClient.describeFailure(lastError))
                ? `no sentinel knows the master name (${RedisClient.describeFailure(lastError, secrets)})`
                : RedisClient.describeFailure(lastError, secrets)
          return new TokenCacheError({
            message: `the Redis client for ${address} is not ready after ${Duration.format(timeout)}: ${reason}`,
            ...(lastError === undefined ? {} : { cause: RedisClient.safeCause(lastError, secrets) })
          })
        }
      })
    )
  })

/**
 * Marks Redis away whenever the client loses its connection (a failover, a restart), even while the cache sends
 * nothing; the listener goes with the scope (a borrowed client outlives the cache). Not a Cluster's `node error`:
 * it repeats for as long as a dead node is remembered, long after the failover.
 */
const watchConnection = (client: Redis | Cluster, health: Health) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const away = () => {
        health.awayAt = liveClock.unsafeCurrentTimeMillis()
      }
      client.on("close", away)
      return away
    }),
    (away) => Effect.sync(() => client.off("close", away))
  )

/** A client the caller owns and closes: used as is, once it is ready. */
export const borrow = (
  client: Redis | Cluster,
  timeout: Duration.Duration
): Effect.Effect<Connection, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const address = RedisClient.describeClient(client)
    defineScripts(client)
    const health: Health = { replicated: false, awayAt: 0, replids: new Map() }
    yield* awaitReady(client, address, timeout, [])
    yield* watchConnection(client, health)
    const connection: Connection = {
      address,
      run: makeRun(client, address, timeout, [], health),
      health,
      scope: yield* Effect.scope
    }
    yield* Server.inspect(client, connection)
    return connection
  })

/**
 * A connection of our own to `url`, connected before it is returned (so a wrong address fails here) and closed
 * with the scope. It fails commands fast while Redis is away instead of queueing them for long. A TLS mismatch
 * (`rediss://` to a plain server, `redis://` to a TLS one) is a ConfigurationError that says so, found out as soon
 * as the first try fails or stalls, not at the timeout.
 */
export const open = (
  url: string,
  timeout: Duration.Duration
): Effect.Effect<Connection, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    const { address, password } = yield* parseUrl(url)
    const secrets = password === "" ? [] : [password]
    const millis = Math.max(1, Math.round(Duration.toMillis(timeout)))
    const ioredis = yield* Peer.ioredis
    const errors: Array<unknown> = []
    const client = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const redis = new ioredis.Redis(url, {
            lazyConnect: true,
            connectTimeout: millis,
            // ioredis' own bound on each reply; commands fail at once while Redis is away (no offline queue), a
            // command in flight at a disconnection fails at once (no retries of ioredis' own: `run` tries it again)
            // and is never sent again by ioredis after it (it could take a lock nobody holds)
            commandTimeout: millis,
            enableOfflineQueue: false,
            autoResendUnfulfilledCommands: false,
            maxRetriesPerRequest: 0,
            retryStrategy: (times) => Math.min(100 * times, 2000)
          })
          defineScripts(redis)
          // The failing command reports the error; without a listener ioredis would print every reconnect failure.
          redis.on("error", (error) => {
            errors.push(error)
          })
          return redis
        },
        catch: Peer.missing
      }),
      // QUIT lets pending replies arrive; it is abandoned after a second (finalizers are uninterruptible, hence
      // `interruptible` for the timeout to work), and a connection that is not ready is just dropped.
      (redis) =>
        Effect.interruptible(
          Effect.promise(() => (redis.status === "ready" ? redis.quit().catch(() => "OK") : Promise.resolve("OK")))
        ).pipe(Effect.timeout("1 second"), Effect.ignore, Effect.ensuring(Effect.sync(() => redis.disconnect())))
    )
    const health: Health = { replicated: false, awayAt: 0, replids: new Map() }
    const connecting = Effect.interruptible(Effect.tryPromise({ try: () => client.connect(), catch: (cause) => cause }))
    yield* Effect.raceFirst(
      connecting,
      // `rediss://` to a plain server: ioredis would wait for the handshake until the timeout
      Effect.flatMap(Server.plainServer(url, address), Effect.fail)
    ).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => new Error(`no connection within ${Duration.format(timeout)}`)
      }),
      Effect.catchAll((cause) =>
        Effect.gen(function* () {
          client.disconnect()
          if (cause instanceof ConfigurationError) return yield* cause
          // `redis://` to a TLS server: it closes the connection, which looks like any failure to connect
          const mismatch = yield* Server.tlsServer(url, address)
          if (mismatch !== undefined) return yield* mismatch
          // ioredis rejects `connect()` with "Connection is closed."; the 'error' event has the reason.
          const reason = errors.at(-1) ?? cause
          return yield* new TokenCacheError({
            message: `cannot connect to Redis at ${address}: ${RedisClient.describeFailure(reason, secrets)}`,
            cause: RedisClient.safeCause(reason, secrets)
          })
        })
      )
    )
    yield* watchConnection(client, health)
    const connection: Connection = {
      address,
      run: makeRun(client, address, timeout, secrets, health),
      health,
      scope: yield* Effect.scope
    }
    yield* Server.inspect(client, connection)
    return connection
  })
