// A process of the Effect 3 line in a mixed fleet (the Effect 4 line's mixed-fleet tests start it): an
// AuthorizationCode provider on a shared cache (TokenCache.file at `path`, a user's entry of TokenStore.directory at
// `directory` + `userId`, or RedisTokenCache at `redisUrl` + `key`),
// calling getAccessToken until `durationMs` has passed.
// Prints one JSON line: { line, calls, tokens: [distinct access tokens, in order], errors: [messages] }.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { RedisTokenCache } from "@service-sdk/redis"
import { AuthorizationCode, TokenCache, TokenStore } from "../../dist/index.js"

const config = JSON.parse(process.argv[2])
const program = Effect.gen(function* () {
  const tokenCache =
    config.directory !== undefined
      ? (yield* TokenStore.directory(config.directory))(config.userId)
      : config.redisUrl === undefined
        ? yield* TokenCache.file(config.path)
        : yield* RedisTokenCache.make({ url: config.redisUrl, key: config.key })
  const provider = yield* AuthorizationCode.make({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    authUrl: config.authUrl,
    tokenCache,
    skew: config.skew
  })
  const tokens = []
  const errors = []
  let calls = 0
  const end = Date.now() + config.durationMs
  while (Date.now() < end) {
    calls++
    const result = yield* Effect.either(provider.getAccessToken)
    if (result._tag === "Left") errors.push(result.left.message)
    else if (tokens.at(-1) !== Redacted.value(result.right)) tokens.push(Redacted.value(result.right))
    yield* Effect.sleep(config.pauseMs)
  }
  return { line: 3, calls, tokens, errors }
})
const result = await Effect.runPromise(
  program.pipe(Effect.scoped, Effect.provide(Layer.merge(NodeFileSystem.layer, FetchHttpClient.layer)))
)
console.log(JSON.stringify(result))
