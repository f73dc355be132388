// One process of a fleet under faults, run by plain `node` on the built packages (dist):
//   node faultWorker.mjs '<json config>'
// config: { redisUrl, key, authUrl, clientId, clientSecret, grant: "client_credentials" | "authorization_code",
//           scope?, callers, pauseMs, skew, lockTtl?, commandTimeout?, hook?: "stop-after-response" |
//           "kill-after-response" }
// Its callers call getAccessToken in a loop. It prints one JSON line per event on stdout: {"event":"ready"},
// {"event":"token-request"}, {"event":"invalid_grant"}, {"event":"hook"} (just before it stops or kills itself), and
// {"event":"report", ...} when asked. Commands on stdin, one per line: "arm" (the hook fires at the next token
// response), "disarm", "report" (counts since the last report), "stop" (a last report, then exit). Tokens are reported as
// short hashes only.
import { createHash } from "node:crypto"
import { createInterface } from "node:readline"
import { NodeHttpClient } from "@effect/platform-node"
import { HttpClient } from "@effect/platform"
import { RedisTokenCache } from "@service-sdk/redis"
import { Effect, Layer, Redacted } from "effect"
import { AuthorizationCode, ClientCredentials } from "service-sdk"

const config = JSON.parse(process.argv[2])
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`)
const hash = (token) => createHash("sha256").update(token).digest("hex").slice(0, 12)

let armed = false
const isTokenCall = (request) => request.url.endsWith("/api/token")

const Http = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    client.pipe(
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
              // the token arrived (and the server rotated the refresh token) but is not stored yet
              process.kill(process.pid, config.hook === "kill-after-response" ? "SIGKILL" : "SIGSTOP")
            }
          )
        }
        return Effect.void
      })
    )
  )
).pipe(Layer.provide(NodeHttpClient.layerUndici))

const fresh = () => ({ calls: 0, errors: {}, maxMs: 0, tokens: new Set() })
let stats = fresh()
let running = true

const program = Effect.gen(function* () {
  // at start-up, as an app would: a connection that took longer than the 1 s command timeout on a loaded machine is
  // tried again (a few times), it is not the fault under test
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
    return Effect.either(provider.getAccessToken).pipe(
      Effect.flatMap((result) => {
        const millis = performance.now() - started
        stats.calls += 1
        stats.maxMs = Math.max(stats.maxMs, millis)
        if (result._tag === "Left") stats.errors[result.left._tag] = (stats.errors[result.left._tag] ?? 0) + 1
        else stats.tokens.add(hash(Redacted.value(result.right)))
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
}).pipe(Effect.scoped, Effect.provide(Http))

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
