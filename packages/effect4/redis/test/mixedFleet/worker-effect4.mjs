// A process of the Effect 4 line in a mixed fleet on one Redis (mixedFleet.test.ts starts it, on the Node of the
// Effect 4 line): UserTokens over a RedisTokenStore (the built packages, dist/), each user's getAccessToken called
// until `durationMs` has passed, then each user's /me with its current token.
// Prints one JSON line: { line, node, calls, tokens: { user: [distinct access tokens, in order] }, me: { user: id },
// errors: [messages] }.
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { UserTokens } from "@service-sdk/effect"
import { RedisTokenStore } from "../../dist/index.js"

const config = JSON.parse(process.argv[2])
const program = Effect.gen(function* () {
  const store = yield* RedisTokenStore.make({ url: config.redisUrl, prefix: config.prefix })
  const users = yield* UserTokens.make({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    authUrl: config.authUrl,
    store,
    skew: config.skew
  })
  const tokens = Object.fromEntries(config.users.map((user) => [user, []]))
  const errors = []
  let calls = 0
  const end = Date.now() + config.durationMs
  while (Date.now() < end) {
    for (const user of config.users) {
      calls++
      const result = yield* Effect.result(users.provider(user).getAccessToken)
      if (Result.isFailure(result)) errors.push(`${user}: ${result.failure.message}`)
      else if (tokens[user].at(-1) !== Redacted.value(result.success)) tokens[user].push(Redacted.value(result.success))
    }
    yield* Effect.sleep(config.pauseMs)
  }
  const me = {}
  for (const user of config.users) {
    const token = yield* users.provider(user).getAccessToken
    const response = yield* Effect.promise(() =>
      fetch(`${config.apiUrl}/me`, { headers: { authorization: `Bearer ${Redacted.value(token)}` } })
    )
    me[user] = response.ok ? (yield* Effect.promise(() => response.json())).id : `HTTP ${response.status}`
  }
  return { line: 4, node: process.version, calls, tokens, me, errors }
})
const result = await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)))
console.log(JSON.stringify(result))
process.exit(0)
