/**
 * The options every Redis cache shares (connection and lock), checked and resolved once: `RedisTokenCache.make` for
 * one key and `RedisTokenStore.make` for one key per user over the same connection. Bad input from plain JS is a
 * ConfigurationError naming the option, never a TypeError or a crash later.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError, TokenCache, type TokenCacheError } from "@service-sdk/effect"
import * as Connection from "./connection.js"
import { inCloudflareWorker, workerRedisProblem } from "@service-sdk/shared/workers"

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
  lockTtl: Duration.seconds(10),
  lockWait: Duration.minutes(2),
  pollInterval: Duration.millis(50),
  commandTimeout: Duration.seconds(5)
} as const

/** The longest delay Node's timers keep (a longer one fires after 1 ms); Redis' `PX` takes it too. */
export const MAX_MILLIS = 2 ** 31 - 1

const describeValue = (value: unknown): string =>
  typeof value === "string"
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
    : typeof value === "number" || typeof value === "bigint" || typeof value === "boolean"
      ? String(value)
      : value === null
        ? "null"
        : Array.isArray(value)
          ? "an array"
          : typeof value

/**
 * A duration option: at least 1 ms, finite, and at most 2^31−1 ms (what Node's timers and Redis accept); anything
 * else is a ConfigurationError naming the option (the SDK's one rule, `TokenCache.durationOption`).
 */
export const duration = (
  name: string,
  option: string,
  value: unknown,
  fallback: Duration.Duration
): Effect.Effect<Duration.Duration, ConfigurationError> =>
  TokenCache.durationOption(value, { option: `${name} option ${option}`, fallback, maxMillis: MAX_MILLIS })

/** Whether `client` looks like an ioredis `Redis` or `Cluster` (what the cache calls on it). */
const isClient = (client: unknown): client is Redis | Cluster =>
  typeof client === "object" &&
  client !== null &&
  typeof (client as Redis).defineCommand === "function" &&
  typeof (client as Redis).get === "function" &&
  typeof (client as Redis).set === "function" &&
  typeof (client as Redis).on === "function" &&
  typeof (client as Redis).status === "string"

/** The options object itself: a plain object, else a ConfigurationError that says what is expected. */
export const object = <A extends object>(name: string, options: unknown, example: string) =>
  typeof options === "object" && options !== null && !Array.isArray(options)
    ? Effect.succeed(options as A)
    : Effect.fail(
        new ConfigurationError({
          message: `${name} needs an options object, e.g. ${example}, got ${describeValue(options)}`
        })
      )

export interface Resolved {
  readonly connection: Connection.Connection
  readonly lock: {
    readonly ttl: Duration.Duration
    readonly wait: Duration.Duration
    readonly pollInterval: Duration.Duration
  }
}

/** The connection (opened from `url`, or the `client` borrowed once ready) and the lock's timings. */
export const resolve = (
  name: string,
  options: SharedOptions
): Effect.Effect<Resolved, TokenCacheError | ConfigurationError, Scope.Scope> =>
  Effect.gen(function* () {
    if (inCloudflareWorker()) return yield* new ConfigurationError({ message: workerRedisProblem(name) })
    const { client, url } = options
    if (client !== undefined && url !== undefined) {
      return yield* new ConfigurationError({ message: `${name} takes a client or a url, not both` })
    }
    if (client !== undefined && !isClient(client)) {
      return yield* new ConfigurationError({
        message: `${name} option client must be an ioredis Redis or Cluster client, got ${describeValue(client)}`
      })
    }
    if (url !== undefined && typeof url !== "string") {
      return yield* new ConfigurationError({
        message: `${name} option url must be a redis:// or rediss:// URL string, got ${describeValue(url)}`
      })
    }
    const commandTimeout = yield* duration(name, "commandTimeout", options.commandTimeout, defaults.commandTimeout)
    const lock = {
      ttl: yield* duration(name, "lockTtl", options.lockTtl, defaults.lockTtl),
      wait: yield* duration(name, "lockWait", options.lockWait, defaults.lockWait),
      pollInterval: yield* duration(name, "pollInterval", options.pollInterval, defaults.pollInterval)
    }
    const connection =
      client !== undefined
        ? yield* Connection.borrow(client, commandTimeout)
        : yield* Connection.open(url ?? defaults.url, commandTimeout)
    return { connection, lock }
  })
