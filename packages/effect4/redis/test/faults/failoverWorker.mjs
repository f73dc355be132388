// The Effect 4 line's process of the Redis failover suites (packages/redis/test/faults/support/failoverSuite.ts runs
// it, on the Node of the Effect 4 line): the protocol of the Effect 3 line's failoverWorker.mjs (same config, same
// stdout events and stdin commands; its line-free half, failoverProcess.mjs, is shared), on the built 2.x packages
// (dist/) and Effect 4.
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as ioredis from "ioredis"
import { UserTokens } from "@service-sdk/effect"
import { failoverProcess } from "../../../../redis/test/faults/support/failoverProcess.mjs"
import { RedisTokenStore } from "../../dist/index.js"

const worker = failoverProcess(ioredis)
const { config } = worker

// Counts the token endpoint's invalid_grant answers (a refresh token presented after it was rotated out).
const countInvalidGrants = Effect.provideServiceEffect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (http) =>
    HttpClient.tap(http, (response) =>
      response.status === 400 && response.request.url.endsWith("/api/token")
        ? Effect.map(
            Effect.orElseSucceed(response.json, () => null),
            worker.tokenError
          )
        : Effect.void
    )
  )
)

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
      return Effect.result(users.provider(userId).getAccessToken.pipe(Effect.annotateLogs("user", userId))).pipe(
        Effect.flatMap((result) =>
          Effect.sync(() =>
            Result.isFailure(result)
              ? worker.record(userId, started, result.failure)
              : worker.record(userId, started, undefined, Redacted.value(result.success))
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
  countInvalidGrants,
  Effect.provide(FetchHttpClient.layer),
  // SERVICE_SDK_FAILOVER_LOG (failover.ts): debug lines on stdout, which the suite keeps
  Effect.provideService(References.MinimumLogLevel, process.env.SERVICE_SDK_FAILOVER_LOG ? "Debug" : "Info")
)

worker.run(Effect.runPromise(program))
