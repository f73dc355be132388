/**
 * One Redis connection for the caches of this package: the user's client (borrowed, never closed) or one opened from
 * a URL (closed with the scope). Every command is bounded by `commandTimeout`; any failure is a TokenCacheError that
 * names the server and never holds a password.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Redis, type Cluster } from "ioredis"
import { ConfigurationError, TokenCacheError } from "service-sdk"
import { SCRIPTS, type ScriptName } from "./shared/redisScripts.js"
import { describeCause, maskUrlCredentials, safeCause } from "./shared/redact.js"

export interface Connection {
  /** Where it points, for messages (no credentials). */
  readonly address: string
  readonly run: <A>(label: string, f: (redis: Redis | Cluster) => Promise<A>) => Effect.Effect<A, TokenCacheError>
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
  redis: Redis | Cluster,
  name: ScriptName,
  key: string,
  ...args: ReadonlyArray<string | number>
): Promise<unknown> =>
  (redis as unknown as Record<ScriptName, (...args: ReadonlyArray<string | number>) => Promise<unknown>>)[name](
    key,
    ...args
  )

const describeClient = (client: Redis | Cluster): string => {
  const options = (client as Redis).options as { host?: string; port?: number } | undefined
  return options?.host !== undefined ? `redis://${options.host}:${options.port ?? 6379}` : "a Redis Cluster"
}

const make = (client: Redis | Cluster, address: string, timeout: Duration.Duration): Connection => {
  defineScripts(client)
  return {
    address,
    run: (label, f) =>
      Effect.tryPromise({
        try: () => f(client),
        catch: (cause) =>
          new TokenCacheError({
            message: `Redis ${label} on ${address} failed: ${maskUrlCredentials(describeCause(cause))}`,
            cause: safeCause(cause)
          })
      }).pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () =>
            Effect.fail(
              new TokenCacheError({
                message: `Redis ${label} on ${address} did not answer within ${Duration.format(timeout)}`
              })
            )
        })
      )
  }
}

/** The user's client: borrowed, never closed here. */
export const borrow = (client: Redis | Cluster, timeout: Duration.Duration): Connection =>
  make(client, describeClient(client), timeout)

/** A client of our own on `url`, connected now and closed with the scope. */
export const open = (
  url: string,
  timeout: Duration.Duration
): Effect.Effect<Connection, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    if (!/^rediss?:\/\//.test(url) || !URL.canParse(url)) {
      return yield* new ConfigurationError({
        message: `url must be a redis:// or rediss:// URL, got ${maskUrlCredentials(JSON.stringify(url))}`
      })
    }
    const address = maskUrlCredentials(url)
    const millis = Math.max(1, Math.round(Duration.toMillis(timeout)))
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const redis = new Redis(url, {
            lazyConnect: true,
            commandTimeout: millis,
            connectTimeout: millis,
            maxRetriesPerRequest: 0,
            enableOfflineQueue: false
          })
          // no unhandled 'error' events: failures reach callers as TokenCacheError
          redis.on("error", () => {})
          await redis.connect()
          return redis
        },
        catch: (cause) =>
          new TokenCacheError({
            message: `cannot connect to Redis at ${address}: ${maskUrlCredentials(describeCause(cause))}`,
            cause: safeCause(cause)
          })
      }),
      (redis) =>
        Effect.promise(() =>
          redis.quit().then(
            () => undefined,
            () => redis.disconnect()
          )
        )
    )
    return make(client, address, timeout)
  })
