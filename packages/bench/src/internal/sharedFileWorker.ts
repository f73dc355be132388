/**
 * One process of the shared token file benchmark (part 11), run by plain `node`:
 * `node sharedFileWorker.js '<json config>'`. Prints "ready" once its provider exists, starts its callers on a "go"
 * line, and after `durationMs` prints the JSON `{ calls }`. Its provider renews over `TokenCache.file(path)`, or over
 * the same file without the shared-cache members (`get`/`set` only), so each process renews on its own.
 */
import { createInterface } from "node:readline"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import { ClientCredentials, TokenCache } from "@service-sdk/effect"

interface Config {
  readonly path: string
  /** with the lock file and compare-and-set, or without */
  readonly lock: boolean
  readonly authUrl: string
  readonly clientId: string
  readonly clientSecret: string
  readonly callers: number
  readonly pauseMs: number
  readonly durationMs: number
  readonly skew: `${number} second`
}

const config = JSON.parse(process.argv[2] ?? "{}") as Config
const go = new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()))

const program = Effect.gen(function* () {
  const file = yield* TokenCache.file(config.path)
  const tokenCache: TokenCache.TokenCache = config.lock ? file : { get: file.get, set: file.set }
  const provider = yield* ClientCredentials.make({ ...config, tokenCache })
  yield* Effect.sync(() => process.stdout.write("ready\n"))
  yield* Effect.promise(() => go)
  const end = performance.now() + config.durationMs
  let calls = 0
  const caller = Effect.gen(function* () {
    while (performance.now() < end) {
      yield* provider.getAccessToken
      calls++
      yield* Effect.sleep(`${config.pauseMs} millis`)
    }
  })
  yield* Effect.all(
    Array.from({ length: config.callers }, () => caller),
    { concurrency: "unbounded", discard: true }
  )
  return { calls }
}).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici), Effect.provide(NodeFileSystem.layer))

Effect.runPromise(program).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`)
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
