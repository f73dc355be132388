// The Effect 4 line's process of the Redis failover suites (packages/redis/test/faults/support/failoverSuite.ts runs
// it, on the Node of the Effect 4 line): the protocol of the Effect 3 line's failoverWorker.mjs (same config, same
// stdout events and stdin commands; see there), on the built 2.x packages (dist/) and Effect 4.
import { createHash } from "node:crypto"
import { createInterface } from "node:readline"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { Cluster, Redis } from "ioredis"
import { UserTokens } from "service-sdk"
import { RedisTokenStore } from "../../dist/index.js"

const config = JSON.parse(process.argv[2])
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`)
const hash = (token) => createHash("sha256").update(token).digest("hex").slice(0, 12)
const millis = (text) => Number(String(text).split(" ")[0]) * (String(text).includes("second") ? 1000 : 1)

// The README's client recipe, as in the Effect 3 worker
const commandTimeout = millis(config.commandTimeout)
const client =
  config.topology.kind === "cluster"
    ? new Cluster(config.topology.nodes, {
        enableOfflineQueue: false,
        clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
        redisOptions: {
          commandTimeout,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          connectTimeout: commandTimeout
        }
      })
    : new Redis({
        sentinels: config.topology.sentinels,
        name: config.topology.name,
        enableOfflineQueue: false,
        commandTimeout,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        connectTimeout: commandTimeout,
        retryStrategy: (times) => Math.min(100 * times, 1000),
        sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
        reconnectOnError: (error) => error.message.startsWith("READONLY")
      })
client.on("error", () => {})

const fresh = () => ({
  calls: 0,
  errors: {},
  messages: [],
  slow: [],
  maxMs: 0,
  maxAt: 0,
  wrongUser: 0,
  verified: 0,
  unverified: 0,
  invalidGrants: 0
})
let stats = fresh()
let running = true
const seen = new Map(config.users.map((user) => [user, new Set()]))

/** The owner of a token, as the data API sees it (off the caller's path). */
const verify = async (userId, token) => {
  try {
    const response = await fetch(`${config.apiUrl}/me`, { headers: { authorization: `Bearer ${token}` } })
    if (response.status !== 200) {
      stats.unverified++
      return
    }
    const me = await response.json()
    if (me.id === userId) stats.verified++
    else {
      stats.wrongUser++
      process.stderr.write(`wrong user: ${userId} was served a token of ${me.id}\n`)
    }
  } catch {
    stats.unverified++
  }
}

// Counts the token endpoint's invalid_grant answers (a refresh token presented after it was rotated out).
const countInvalidGrants = Effect.provideServiceEffect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (http) =>
    HttpClient.tap(http, (response) =>
      response.status === 400 && response.request.url.endsWith("/api/token")
        ? Effect.map(
            Effect.orElseSucceed(response.json, () => null),
            (body) => {
              if (body?.error === "invalid_grant") stats.invalidGrants++
            }
          )
        : Effect.void
    )
  )
)

const record = (userId, started, result) => {
  const took = performance.now() - started
  stats.calls++
  if (took > stats.maxMs) {
    stats.maxMs = took
    stats.maxAt = Date.now()
  }
  if (took > 1000 && stats.slow.length < 5) stats.slow.push({ ms: Math.round(took), at: Date.now(), userId })
  if (Result.isFailure(result)) {
    const error = result.failure
    stats.errors[error._tag] = (stats.errors[error._tag] ?? 0) + 1
    // error messages never hold a token (the SDK's contract): a few, for the test's log
    const text = `${error._tag}: ${error.message}`.slice(0, 300)
    if (stats.messages.length < 3 && !stats.messages.includes(text)) stats.messages.push(text)
    return
  }
  const token = Redacted.value(result.success)
  const tokens = seen.get(userId)
  if (!tokens.has(hash(token))) {
    tokens.add(hash(token))
    void verify(userId, token)
  }
}

const program = Effect.gen(function* () {
  const store = yield* RedisTokenStore.make({
    client,
    prefix: config.prefix,
    lockTtl: config.lockTtl,
    commandTimeout: config.commandTimeout,
    pollInterval: "20 millis"
  })
  const users = yield* UserTokens.make({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    authUrl: config.authUrl,
    skew: config.skew,
    timeout: "5 seconds",
    store
  })
  const call = (userId) =>
    Effect.suspend(() => {
      const started = performance.now()
      return Effect.result(users.provider(userId).getAccessToken).pipe(
        Effect.flatMap((result) => Effect.sync(() => record(userId, started, result)))
      )
    })
  const loop = (caller) =>
    Effect.gen(function* () {
      for (let turn = caller; running; turn++) {
        yield* call(config.users[turn % config.users.length])
        yield* Effect.sleep(`${config.pauseMs} millis`)
      }
    })
  yield* Effect.sync(() => emit({ event: "ready" }))
  yield* Effect.forEach(
    Array.from({ length: config.callers }, (_, caller) => caller),
    loop,
    { concurrency: "unbounded" }
  )
}).pipe(Effect.scoped, countInvalidGrants, Effect.provide(FetchHttpClient.layer))

const report = () => {
  const { maxMs, ...rest } = stats
  stats = fresh()
  emit({ event: "report", ...rest, maxMs: Math.round(maxMs) })
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "report") report()
  else if (line === "stop") running = false
})

Effect.runPromise(program).then(
  async () => {
    // the last checks of new tokens, then the last report
    await new Promise((resolve) => setTimeout(resolve, 300))
    report()
    client.disconnect()
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
