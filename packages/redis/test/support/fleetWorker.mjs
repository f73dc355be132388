// One process of the multi-process fleet test, run by plain `node` against the built packages (dist):
// node fleetWorker.mjs <redisUrl> <key> <authUrl> <callers>
// Prints "ready" once its provider exists, waits for a line on stdin, then prints the JSON list of distinct tokens
// its concurrent callers got.
import { createInterface } from "node:readline"
import { NodeHttpClient } from "@effect/platform-node"
import { RedisTokenCache } from "@service-sdk/redis"
import { Effect, Redacted } from "effect"
import { ClientCredentials } from "@service-sdk/effect"

const [url, key, authUrl, callers] = process.argv.slice(2)
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()

const program = Effect.gen(function* () {
  const tokenCache = yield* RedisTokenCache.make({ url, key })
  const provider = yield* ClientCredentials.make({
    clientId: "fleet-client",
    clientSecret: "fleet-secret",
    authUrl,
    tokenCache
  })
  yield* Effect.sync(() => console.log("ready"))
  yield* Effect.promise(() => lines.next())
  const tokens = yield* Effect.forEach(Array.from({ length: Number(callers) }), () => provider.getAccessToken, {
    concurrency: "unbounded"
  })
  return [...new Set(tokens.map(Redacted.value))]
}).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

Effect.runPromise(program).then(
  (tokens) => {
    console.log(JSON.stringify(tokens))
    process.exit(0)
  },
  (error) => {
    console.error(String(error))
    process.exit(1)
  }
)
