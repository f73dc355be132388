// The Effect 4 line's process of the Redis fault suites (packages/redis/test/faults/support/fleet.ts runs it, on the
// Node of the Effect 4 line): the protocol of the Effect 3 line's faultWorker.mjs (same config, same stdout events
// and stdin commands; its line-free half, faultProcess.mjs, is shared), on the built 2.x packages (dist/) and
// Effect 4. Tokens are reported as short hashes only.
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { AuthorizationCode, ClientCredentials } from "@service-sdk/effect"
import { faultProcess } from "../../../../redis/test/faults/support/faultProcess.mjs"
import { RedisTokenCache } from "../../dist/index.js"

const worker = faultProcess()
const { config } = worker

// token requests, invalid_grant answers, and the hook (see faultProcess.mjs)
const observed = Effect.provideServiceEffect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (http) =>
    http.pipe(
      HttpClient.tapRequest((request) => Effect.sync(() => worker.request(request.url))),
      HttpClient.tap((response) =>
        worker.wantsBody(response.request.url, response.status)
          ? Effect.map(
              Effect.orElseSucceed(response.json, () => null),
              (body) => worker.tokenAnswer(response.status, body)
            )
          : Effect.void
      )
    )
  )
)

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
      Effect.flatMap((result) =>
        Effect.sync(() =>
          Result.isFailure(result)
            ? worker.record(started, result.failure._tag)
            : worker.record(started, undefined, Redacted.value(result.success))
        )
      )
    )
  })
  const loop = Effect.gen(function* () {
    while (worker.running()) {
      yield* call
      yield* Effect.sleep(`${config.pauseMs} millis`)
    }
  })
  yield* Effect.sync(worker.ready)
  yield* Effect.forEach(Array.from({ length: config.callers }), () => loop, { concurrency: "unbounded" })
}).pipe(Effect.scoped, observed, Effect.provide(FetchHttpClient.layer))

worker.run(Effect.runPromise(program))
