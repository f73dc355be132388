// A process of the Effect 4 line in a mixed fleet: an AuthorizationCode provider on a shared cache (TokenCache.file at
// `path`, a user's entry of TokenStore.directory at `directory` + `userId`, or RedisTokenCache at `redisUrl` + `key`), calling getAccessToken until `durationMs` has passed (the built
// packages, dist/).
// Prints one JSON line: { line, calls, tokens: [distinct access tokens, in order], errors: [messages] }.
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import { RedisTokenCache } from "../../../../redis/dist/index.js"
import { AuthorizationCode, TokenCache, TokenStore } from "../../../dist/index.js"

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
    const result = yield* Effect.result(provider.getAccessToken)
    if (result._tag === "Failure") errors.push(result.failure.message)
    else if (tokens.at(-1) !== Redacted.value(result.success)) tokens.push(Redacted.value(result.success))
    yield* Effect.sleep(config.pauseMs)
  }
  return { line: 4, calls, tokens, errors }
})
const result = await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)))
console.log(JSON.stringify(result))
