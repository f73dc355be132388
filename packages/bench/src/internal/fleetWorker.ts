/**
 * One process of the fleet benchmark (part 8), run by plain `node`: `node fleetWorker.js '<json config>'`. Prints
 * "ready" once its provider exists, starts its callers on a "go" line, and after `durationMs` prints the JSON
 * `{ calls, waits }`: how many calls it made and how long (ms) each call that was not served from memory waited.
 */
import { createInterface } from "node:readline"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { RedisTokenCache } from "@service-sdk/redis"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Redis } from "ioredis"
import { ClientCredentials, TokenCache } from "@service-sdk/effect"

interface Config {
  /** the shared cache, or none: each process on its own (the baseline) */
  readonly redisUrl: string | null
  /** a Sentinel group instead of `redisUrl` (the failover figure), with the README's client recipe */
  readonly sentinel?: { readonly sentinels: ReadonlyArray<{ host: string; port: number }>; readonly name: string }
  readonly key: string
  readonly authUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly callers: number
  readonly pauseMs: number
  readonly durationMs: number
  readonly skew: Duration.DurationInput
}

/** A call served from the provider's memory takes microseconds; one that waited for a renewal takes milliseconds. */
const WAIT_MS = 1

const config = JSON.parse(process.argv[2] ?? "{}") as Config
const go = new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()))

const sentinelClient = (sentinel: NonNullable<Config["sentinel"]>) => {
  const client = new Redis({
    sentinels: [...sentinel.sentinels],
    name: sentinel.name,
    enableOfflineQueue: false,
    commandTimeout: 5_000,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
    reconnectOnError: (error) => error.message.startsWith("READONLY")
  })
  client.on("error", () => {})
  return client
}

const program = Effect.gen(function* () {
  const tokenCache =
    config.sentinel !== undefined
      ? yield* RedisTokenCache.make({ client: sentinelClient(config.sentinel), key: config.key })
      : config.redisUrl === null
        ? yield* TokenCache.memory()
        : yield* RedisTokenCache.make({ url: config.redisUrl, key: config.key })
  const provider = yield* ClientCredentials.make({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    authUrl: config.authUrl,
    skew: config.skew,
    tokenCache
  })
  yield* Effect.sync(() => process.stdout.write("ready\n"))
  yield* Effect.promise(() => go)
  const end = performance.now() + config.durationMs
  const waits: Array<number> = []
  let calls = 0
  const caller = Effect.gen(function* () {
    while (performance.now() < end) {
      const started = performance.now()
      yield* provider.getAccessToken
      const millis = performance.now() - started
      calls++
      if (millis >= WAIT_MS) waits.push(Math.round(millis * 10) / 10)
      yield* Effect.sleep(`${config.pauseMs} millis`)
    }
  })
  yield* Effect.all(
    Array.from({ length: config.callers }, () => caller),
    { concurrency: "unbounded", discard: true }
  )
  return { calls, waits }
}).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

Effect.runPromise(program).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`)
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
