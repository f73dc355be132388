/**
 * The options every Redis cache shares (connection and lock), checked and resolved once: `RedisTokenCache.make` for
 * one key and `RedisTokenStore.make` for one key per user over the same connection. Bad input from plain JS is a
 * ConfigurationError naming the option, never a TypeError or a crash later.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import { ConfigurationError, type TokenCacheError } from "@service-sdk/effect"
import * as Connection from "./connection.js"
import { inCloudflareWorker, workerRedisProblem } from "@service-sdk/shared/workers"

export interface SharedOptions {
  readonly client?: Redis | Cluster | undefined
  readonly url?: string | undefined
  readonly lockTtl?: Duration.Input | undefined
  readonly lockWait?: Duration.Input | undefined
  readonly pollInterval?: Duration.Input | undefined
  readonly commandTimeout?: Duration.Input | undefined
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

/** Below zero or NaN: `Duration.fromInput` would take these as they are (or as zero). */
const negativeOrNaN = (value: unknown): boolean => {
  if (typeof value === "number") return Number.isNaN(value) || value < 0
  if (typeof value === "bigint") return value < 0n
  if (typeof value === "string") return /^\s*-|NaN/i.test(value)
  if (Array.isArray(value)) return value.some((part) => typeof part !== "number" || !(part >= 0))
  return false
}

/**
 * A duration option: at least 1 ms, finite, and at most 2^31−1 ms (what Node's timers and Redis accept); anything
 * else is a ConfigurationError naming the option.
 */
export const duration = (
  name: string,
  option: string,
  value: unknown,
  fallback: Duration.Duration
): Effect.Effect<Duration.Duration, ConfigurationError> =>
  Effect.suspend(() => {
    if (value === undefined) return Effect.succeed(fallback)
    const invalid = (why: string) =>
      Effect.fail(
        new ConfigurationError({ message: `${name} option ${option} must be ${why}, got ${describeValue(value)}` })
      )
    const range = `a duration from 1 ms to ${MAX_MILLIS} ms (about 24.8 days)`
    if (
      negativeOrNaN(value) ||
      (typeof value === "object" && value !== null && !Array.isArray(value) && !Duration.isDuration(value))
    ) {
      return invalid(range)
    }
    let decoded: Option.Option<Duration.Duration>
    try {
      decoded = Duration.fromInput(value as Duration.Input)
    } catch {
      decoded = Option.none()
    }
    if (Option.isNone(decoded)) return invalid(`${range}, e.g. "5 seconds" or milliseconds as a number`)
    const millis = Duration.toMillis(decoded.value)
    if (!Duration.isFinite(decoded.value) || !(millis >= 1) || millis > MAX_MILLIS) return invalid(range)
    return Effect.succeed(decoded.value)
  })

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

/**
 * `make` for plain code: runs a scoped constructor in a scope of its own and resolves to its value with a `close()`
 * (idempotent) that closes that scope; rejects with the SDK's own error (never a wrapper).
 */
export const startScoped = async <A, E>(
  effect: Effect.Effect<A, E, Scope.Scope>
): Promise<{ readonly value: A; readonly close: () => Promise<void> }> => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.provide(scope)(effect))
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= Effect.runPromise(Scope.close(scope, Exit.void))
    return closing
  }
  if (Exit.isSuccess(exit)) return { value: exit.value, close }
  await close()
  throw Cause.squash(exit.cause)
}
