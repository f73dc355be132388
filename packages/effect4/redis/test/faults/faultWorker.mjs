// The Effect 4 line's process of the Redis fault suites (packages/redis/test/faults/support/fleet.ts runs it, on the
// Node of the Effect 4 line): the protocol of the Effect 3 line's faultWorker.mjs (same config, same stdout events
// and stdin commands; see there), on the built 2.x packages (dist/) and Effect 4. Tokens are reported as short
// hashes only.
import { createHash } from "node:crypto"
import { createInterface } from "node:readline"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { AuthorizationCode, ClientCredentials } from "service-sdk"
import { RedisTokenCache } from "../../dist/index.js"

const config = JSON.parse(process.argv[2])
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`)
const hash = (token) => createHash("sha256").update(token).digest("hex").slice(0, 12)

let armed = false
const isTokenCall = (request) => request.url.endsWith("/api/token")

// token requests, invalid_grant answers, and the hook: stop or kill this process when a token arrived (and the
// server rotated the refresh token) but is not stored yet
const observed = Effect.provideServiceEffect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (http) =>
    http.pipe(
      HttpClient.tapRequest((request) => Effect.sync(() => isTokenCall(request) && emit({ event: "token-request" }))),
      HttpClient.tap((response) => {
        if (!isTokenCall(response.request)) return Effect.void
        if (response.status === 400) {
          return Effect.map(
            Effect.orElseSucceed(response.json, () => null),
            (body) => {
              if (body?.error === "invalid_grant") emit({ event: "invalid_grant" })
            }
          )
        }
        if (response.status === 200 && armed) {
          armed = false
          return Effect.map(
            Effect.orElseSucceed(response.json, () => null),
            (body) => {
              emit({ event: "hook", token: hash(String(body?.access_token)) })
              process.kill(process.pid, config.hook === "kill-after-response" ? "SIGKILL" : "SIGSTOP")
            }
          )
        }
        return Effect.void
      })
    )
  )
)

const fresh = () => ({ calls: 0, errors: {}, maxMs: 0, tokens: new Set() })
let stats = fresh()
let running = true

const program = Effect.gen(function* () {
  // a connection slower than the 1 s command timeout on a loaded machine is tried again, as in the Effect 3 worker
  const tokenCache = yield* RedisTokenCache.make({
    url: config.redisUrl,
    key: config.key,
    ...(config.lockTtl === undefined ? {} : { lockTtl: config.lockTtl }),
    ...(config.commandTimeout === undefined ? {} : { commandTimeout: config.commandTimeout }),
    pollInterval: "20 millis"
  }).pipe(Effect.retry({ times: 5, while: (error) => error._tag === "TokenCacheError" }))
  const options = {
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    authUrl: config.authUrl,
    scope: config.scope,
    skew: config.skew,
    timeout: "5 seconds",
    tokenCache
  }
  const provider =
    config.grant === "authorization_code"
      ? yield* AuthorizationCode.make(options)
      : yield* ClientCredentials.make(options)
  const call = Effect.suspend(() => {
    const started = performance.now()
    return Effect.result(provider.getAccessToken).pipe(
      Effect.flatMap((result) => {
        stats.calls += 1
        stats.maxMs = Math.max(stats.maxMs, performance.now() - started)
        if (Result.isFailure(result)) {
          stats.errors[result.failure._tag] = (stats.errors[result.failure._tag] ?? 0) + 1
        } else stats.tokens.add(hash(Redacted.value(result.success)))
        return Effect.void
      })
    )
  })
  const loop = Effect.gen(function* () {
    while (running) {
      yield* call
      yield* Effect.sleep(`${config.pauseMs} millis`)
    }
  })
  yield* Effect.sync(() => emit({ event: "ready" }))
  yield* Effect.forEach(Array.from({ length: config.callers }), () => loop, { concurrency: "unbounded" })
}).pipe(Effect.scoped, observed, Effect.provide(FetchHttpClient.layer))

const report = () => {
  const { calls, errors, maxMs, tokens } = stats
  stats = fresh()
  emit({ event: "report", calls, errors, maxMs: Math.round(maxMs), tokens: [...tokens] })
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "arm") armed = true
  else if (line === "disarm") armed = false
  else if (line === "report") report()
  else if (line === "stop") {
    running = false
    report()
    process.exit(0)
  }
})

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exit(1)
})
