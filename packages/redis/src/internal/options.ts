/**
 * The options every Redis cache shares (connection and lock), resolved once: `RedisTokenCache.make` for one key and
 * `RedisTokenStore.make` for one key per user over the same connection.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError, type TokenCacheError } from "service-sdk"
import * as Connection from "./connection.js"

export interface SharedOptions {
  readonly client?: Redis | Cluster | undefined
  readonly url?: string | undefined
  readonly lockTtl?: Duration.DurationInput | undefined
  readonly lockWait?: Duration.DurationInput | undefined
  readonly pollInterval?: Duration.DurationInput | undefined
  readonly commandTimeout?: Duration.DurationInput | undefined
}

export const defaults = {
  url: Connection.DEFAULT_URL,
  lockTtl: Duration.seconds(30),
  lockWait: Duration.minutes(2),
  pollInterval: Duration.millis(50),
  commandTimeout: Duration.seconds(5)
} as const

const positive = (
  value: Duration.DurationInput | undefined,
  fallback: Duration.Duration,
  name: string,
  option: string
) =>
  Effect.suspend(() => {
    if (value === undefined) return Effect.succeed(fallback)
    const duration = Duration.decodeUnknown(value)
    return Option.isSome(duration) && Duration.greaterThan(duration.value, Duration.zero)
      ? Effect.succeed(duration.value)
      : Effect.fail(new ConfigurationError({ message: `${name} option ${option} must be a positive duration` }))
  })

/** The connection (opened from `url`, or the `client` borrowed) and the lock's timings; `name` is for messages. */
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
      return yield* new ConfigurationError({ message: `${name} takes a client or a url, not both` })
    }
    const commandTimeout = yield* positive(options.commandTimeout, defaults.commandTimeout, name, "commandTimeout")
    const lock = {
      ttl: yield* positive(options.lockTtl, defaults.lockTtl, name, "lockTtl"),
      wait: yield* positive(options.lockWait, defaults.lockWait, name, "lockWait"),
      pollInterval: yield* positive(options.pollInterval, defaults.pollInterval, name, "pollInterval")
    }
    const connection =
      options.client !== undefined
        ? Connection.borrow(options.client, commandTimeout)
        : yield* Connection.open(options.url ?? defaults.url, commandTimeout)
    return { connection, lock }
  })
