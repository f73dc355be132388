// One web-app-like process of the failover tests, run by plain `node` on the built packages (dist):
//   node failoverWorker.mjs '<json config>'
// config: { topology: { kind: "cluster", nodes: [{host, port}] } | { kind: "sentinel", sentinels: [{host, port}], name },
//           prefix, users: [id...], authUrl, apiUrl, clientId, clientSecret, callers, pauseMs, skew, lockTtl,
//           commandTimeout }
// Its ioredis client is the README's recipe for Cluster and Sentinel. Its callers call each user's getAccessToken
// (UserTokens over a RedisTokenStore) in a loop; every new token a user is served is checked against the data API's
// /me (its owner must be that user). It prints one JSON line per event on stdout: {"event":"ready"} and
// {"event":"report", ...}. Commands on stdin, one per line: "report" (counts since the last report), "stop" (callers
// finish their call, the store closes, a last report, exit). The line-free half is failoverProcess.mjs.
import { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { RedisTokenStore } from "@service-sdk/redis"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import * as ioredis from "ioredis"
import { UserTokens } from "@service-sdk/effect"
import { failoverProcess } from "./failoverProcess.mjs"

const worker = failoverProcess(ioredis)
const { config } = worker

// Counts the token endpoint's invalid_grant answers (a refresh token presented after it was rotated out).
const Http = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    HttpClient.tap(client, (response) =>
      response.status === 400 && response.request.url.endsWith("/api/token")
        ? Effect.map(
            Effect.orElseSucceed(response.json, () => null),
            worker.tokenError
          )
        : Effect.void
    )
  )
).pipe(Layer.provide(NodeHttpClient.layerUndici))

const program = Effect.gen(function* () {
  const store = yield* RedisTokenStore.make({
    client: worker.client,
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
    // the default token request timeout (30 s): on a loaded machine a refresh answered after 5 s was retried with
    // the refresh token the first attempt had already rotated out (invalid_grant), which is the token endpoint's
    // retry policy, not what these suites test (issue 44's report)
    store
  })
  const call = (userId) =>
    Effect.suspend(() => {
      const started = performance.now()
      return Effect.either(users.provider(userId).getAccessToken.pipe(Effect.annotateLogs("user", userId))).pipe(
        Effect.flatMap((result) =>
          Effect.sync(() =>
            result._tag === "Left"
              ? worker.record(userId, started, result.left)
              : worker.record(userId, started, undefined, Redacted.value(result.right))
          )
        )
      )
    })
  const loop = (caller) =>
    Effect.gen(function* () {
      for (let turn = caller; worker.running(); turn++) {
        yield* call(config.users[turn % config.users.length])
        yield* Effect.sleep(`${config.pauseMs} millis`)
      }
    })
  yield* Effect.sync(worker.ready)
  yield* Effect.forEach(
    Array.from({ length: config.callers }, (_, caller) => caller),
    loop,
    { concurrency: "unbounded" }
  )
}).pipe(
  Effect.scoped,
  Effect.provide(Http),
  // SERVICE_SDK_FAILOVER_LOG (failover.ts): debug lines on stdout, which the suite keeps
  Logger.withMinimumLogLevel(process.env.SERVICE_SDK_FAILOVER_LOG ? LogLevel.Debug : LogLevel.Info)
)

worker.run(Effect.runPromise(program))
