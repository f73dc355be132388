/**
 * `npm run example:web`: the web app against the embedded emulator, or against a real Service when
 * `SERVICE_SDK_AUTH_URL` is set (with `SERVICE_SDK_CLIENT_ID`, `SERVICE_SDK_CLIENT_SECRET`, `SERVICE_SDK_API_URL`).
 * `PORT` (default 3000), `HOST` (default 127.0.0.1), `BASE_URL` (what browsers use), `REDIS_URL` (tokens and
 * sessions in Redis).
 *
 * @since 1.0.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Emulator } from "@service-sdk/effect/testing"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { noneIfEmpty } from "./WebApp.js"
import * as WebApp from "./WebApp.js"

const env = (name: string): string | undefined => noneIfEmpty(process.env[name])

const program = Effect.gen(function* () {
  const rawPort = env("PORT") ?? "3000"
  const port = /^\d{1,5}$/.test(rawPort) ? Number(rawPort) : Number.NaN
  if (!(port >= 0 && port <= 65_535)) return yield* Effect.fail(`PORT must be a port number, got ${rawPort}`)
  const real = env("SERVICE_SDK_AUTH_URL") !== undefined
  const emulator = real ? undefined : yield* Emulator.make()
  const running = yield* WebApp.make({
    port,
    host: env("HOST"),
    baseUrl: env("BASE_URL"),
    redisUrl: env("REDIS_URL"),
    ...(emulator === undefined
      ? {}
      : {
          clientId: emulator.clientId,
          clientSecret: emulator.clientSecret,
          authUrl: emulator.authUrl,
          apiUrl: emulator.apiUrl
        })
  })
  yield* Console.log(`Web app: ${running.url}  (tokens and sessions in ${running.store})`)
  yield* Console.log(
    emulator === undefined
      ? `Service: ${env("SERVICE_SDK_AUTH_URL")}`
      : `Service: the embedded emulator at ${emulator.authUrl}; on its consent page, type any user id under "Sign in as"`
  )
  yield* Console.log("Press Ctrl+C to stop.")
  return yield* Effect.never
})

program.pipe(
  Effect.scoped,
  Effect.provide(NodeHttpClient.layerUndici),
  Effect.catchAll((error) =>
    Effect.zipRight(
      Console.error(`web-app: ${typeof error === "string" ? error : error.message}`),
      Effect.sync(() => {
        process.exitCode = 1
      })
    )
  ),
  NodeRuntime.runMain
)
