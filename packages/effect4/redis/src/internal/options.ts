/** The options both Redis caches share, checked: a ConfigurationError names a bad one. */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError, type TokenCacheError } from "service-sdk"
import * as Connection from "./connection.js"

export interface SharedOptions {
  /** Your ioredis client (borrowed: never closed here); or `url`. */
  readonly client?: Redis | Cluster | undefined
  /** `redis://` or `rediss://` (default `redis://127.0.0.1:6379`); a client is opened and closed with the scope. */
  readonly url?: string | undefined
  /** How long a lock outlives a holder that stopped extending it (default 10 s). */
  readonly lockTtl?: Duration.Input | undefined
  /** How long to wait for the lock before failing with TokenCacheError (default 2 minutes). */
  readonly lockWait?: Duration.Input | undefined
  /** The pause between two tries of the lock, jittered to 50–150 % (default 50 ms). */
  readonly pollInterval?: Duration.Input | undefined
  /** How long a Redis command may take (default 5 s). */
  readonly commandTimeout?: Duration.Input | undefined
}

export const defaults = {
  url: "redis://127.0.0.1:6379",
  lockTtl: Duration.seconds(10),
  lockWait: Duration.minutes(2),
  pollInterval: Duration.millis(50),
  commandTimeout: Duration.seconds(5)
} as const

const duration = (name: string, option: string, value: Duration.Input | undefined, fallback: Duration.Duration) => {
  if (value === undefined) return Effect.succeed(fallback)
  let decoded: Option.Option<Duration.Duration>
  try {
    decoded =
      typeof value === "number" && (Number.isNaN(value) || value <= 0) ? Option.none() : Duration.fromInput(value)
  } catch {
    decoded = Option.none()
  }
  return Option.isSome(decoded) && Duration.isFinite(decoded.value) && Duration.isPositive(decoded.value)
    ? Effect.succeed(decoded.value)
    : Effect.fail(new ConfigurationError({ message: `${name}: ${option} must be a positive, finite duration` }))
}

export const resolve = (
  name: string,
  options: SharedOptions
): Effect.Effect<
  {
    readonly connection: Connection.Connection
    readonly lock: {
      readonly ttl: Duration.Duration
      readonly wait: Duration.Duration
      readonly pollInterval: Duration.Duration
    }
  },
  TokenCacheError | ConfigurationError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    if (options.client !== undefined && options.url !== undefined) {
      return yield* new ConfigurationError({ message: `${name}: pass either client or url, not both` })
    }
    const commandTimeout = yield* duration(name, "commandTimeout", options.commandTimeout, defaults.commandTimeout)
    const lock = {
      ttl: yield* duration(name, "lockTtl", options.lockTtl, defaults.lockTtl),
      wait: yield* duration(name, "lockWait", options.lockWait, defaults.lockWait),
      pollInterval: yield* duration(name, "pollInterval", options.pollInterval, defaults.pollInterval)
    }
    const connection =
      options.client !== undefined
        ? Connection.borrow(options.client, commandTimeout)
        : yield* Connection.open(options.url ?? defaults.url, commandTimeout)
    return { connection, lock }
  })
