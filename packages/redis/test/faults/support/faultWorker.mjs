// One process of a fleet under faults, run by plain `node` on the built packages (dist):
//   node faultWorker.mjs '<json config>'
// config: { redisUrl, key, authUrl, clientId, clientSecret, grant: "client_credentials" | "authorization_code",
//           scope?, callers, pauseMs, skew, lockTtl?, commandTimeout?, hook?: "stop-after-response" |
//           "kill-after-response" }
// Its callers call getAccessToken in a loop. It prints one JSON line per event on stdout: {"event":"ready"},
// {"event":"token-request"}, {"event":"invalid_grant"}, {"event":"hook"} (just before it stops or kills itself), and
// {"event":"report", ...} when asked. Commands on stdin, one per line: "arm" (the hook fires at the next token
// response), "disarm", "report" (counts since the last report), "stop" (a last report, then exit). Tokens are reported as
// short hashes only. The line-free half is faultProcess.mjs.
import { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { RedisTokenCache } from "@service-sdk/redis"
import { Effect, Layer, Redacted } from "effect"
import { AuthorizationCode, ClientCredentials } from "@service-sdk/effect"
import { faultProcess } from "./faultProcess.mjs"

const worker = faultProcess()
const { config } = worker

const Http = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    client.pipe(
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
).pipe(Layer.provide(NodeHttpClient.layerUndici))

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
      Effect.flatMap((result) =>
        Effect.sync(() =>
          result._tag === "Left"
            ? worker.record(started, result.left._tag)
            : worker.record(started, undefined, Redacted.value(result.right))
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
}).pipe(Effect.scoped, Effect.provide(Http))

worker.run(Effect.runPromise(program))
