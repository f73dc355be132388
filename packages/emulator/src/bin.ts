#!/usr/bin/env node
/**
 * `service-sdk-emulator`: runs the emulator until Ctrl-C.
 *
 * @since 1.0.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { parseArgs } from "node:util"
import type { EmulatorOptions } from "./Emulator.js"
import { Emulator } from "./internal/effectApi.js"
import { EmulatorError } from "./EmulatorError.js"

const USAGE = `Usage: service-sdk-emulator [options]

Runs a local emulator of the Service (accounts + data API) on 127.0.0.1 until Ctrl-C.

Options:
  -p, --port <n>               port to listen on (default 0: any free port)
      --auto-approve           approve /authorize requests without showing the consent page
      --token-lifetime <s>     access token lifetime in seconds (default 3600)
      --refresh-token-lifetime <s>
                               refresh tokens end <s> seconds after sign-in, not extended by refreshing
                               (the Service: 15552000, 180 days; default: never)
      --rotate-refresh-tokens  issue a new refresh token on every refresh
      --token-latency-ms <ms>  extra latency on every token response (default 0)
      --client <id:secret>     register another client (repeatable); <id> alone: a public client (PKCE)
      --require-pkce           every client must use PKCE (S256); public clients always must
  -q, --quiet                  no log line per request (default: "GET /v1/me 200 3 ms" on stderr)
  -h, --help                   show this help`

/** One line per request on stderr, so stdout keeps only the banner. */
const logRequest = (line: string) => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
}

const integer = (name: string, raw: string | undefined): Effect.Effect<number | undefined, EmulatorError> => {
  if (raw === undefined) return Effect.succeed(undefined)
  return /^\d+$/.test(raw)
    ? Effect.succeed(Number(raw))
    : Effect.fail(new EmulatorError({ message: `--${name} must be a non-negative integer, got ${raw}` }))
}

const parseOptions = (argv: ReadonlyArray<string>): Effect.Effect<EmulatorOptions | "help", EmulatorError> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...argv],
          strict: true,
          allowPositionals: false,
          options: {
            port: { type: "string", short: "p" },
            "auto-approve": { type: "boolean" },
            "token-lifetime": { type: "string" },
            "refresh-token-lifetime": { type: "string" },
            "rotate-refresh-tokens": { type: "boolean" },
            "token-latency-ms": { type: "string" },
            client: { type: "string", multiple: true },
            "require-pkce": { type: "boolean" },
            quiet: { type: "boolean", short: "q" },
            help: { type: "boolean", short: "h" }
          }
        }).values,
      catch: (cause) => new EmulatorError({ message: (cause as Error).message, cause })
    })
    if (parsed.help === true) return "help" as const
    const quiet = parsed.quiet === true
    const port = yield* integer("port", parsed.port)
    const tokenLifetime = yield* integer("token-lifetime", parsed["token-lifetime"])
    const tokenLatencyMs = yield* integer("token-latency-ms", parsed["token-latency-ms"])
    const refreshTokenLifetime = yield* integer("refresh-token-lifetime", parsed["refresh-token-lifetime"])
    const clients: Array<{ clientId: string; clientSecret?: string }> = []
    for (const client of parsed.client ?? []) {
      const colon = client.indexOf(":")
      if (colon === -1 && client !== "") {
        clients.push({ clientId: client }) // no secret: a public client
        continue
      }
      if (colon <= 0 || colon === client.length - 1) {
        return yield* Effect.fail(
          new EmulatorError({ message: `--client must look like id:secret (or id), got ${client}` })
        )
      }
      clients.push({ clientId: client.slice(0, colon), clientSecret: client.slice(colon + 1) })
    }
    const options: EmulatorOptions = {
      ...(port === undefined ? {} : { port }),
      ...(tokenLifetime === undefined ? {} : { tokenLifetime }),
      ...(tokenLatencyMs === undefined ? {} : { tokenLatencyMs }),
      ...(refreshTokenLifetime === undefined ? {} : { refreshTokenLifetime }),
      ...(clients.length === 0 ? {} : { clients }),
      autoApprove: parsed["auto-approve"] === true,
      rotateRefreshTokens: parsed["rotate-refresh-tokens"] === true,
      requirePkce: parsed["require-pkce"] === true,
      ...(quiet ? {} : { onRequest: logRequest })
    }
    return options
  })

const banner = (emulator: Emulator.Service, options: EmulatorOptions): string =>
  [
    "Service emulator running (Ctrl-C to stop)",
    `  auth URL:      ${emulator.authUrl}   (token: /api/token, consent: /authorize)`,
    `  API URL:       ${emulator.apiUrl}`,
    `  client id:     ${emulator.clientId}`,
    `  client secret: ${emulator.clientSecret}`,
    `  public client: ${emulator.publicClientId}   (no secret: PKCE only)`,
    `  control:       ${emulator.authUrl}/__emulator/stats`,
    `  auto-approve:  ${options.autoApprove === true ? "on" : "off"}`,
    "",
    "Point the SDK at it:",
    `  export SERVICE_SDK_AUTH_URL=${emulator.authUrl}`,
    `  export SERVICE_SDK_API_URL=${emulator.apiUrl}`,
    `  export SERVICE_SDK_CLIENT_ID=${emulator.clientId}`,
    `  export SERVICE_SDK_CLIENT_SECRET=${emulator.clientSecret}`,
    "",
    options.onRequest === undefined
      ? "Requests are not logged (--quiet)."
      : "One line per request follows (--quiet: none)."
  ].join("\n")

const main = Effect.gen(function* () {
  const options = yield* parseOptions(process.argv.slice(2))
  if (options === "help") {
    return yield* Console.log(USAGE)
  }
  const emulator = yield* Emulator.make(options)
  yield* Effect.addFinalizer(() => Console.log("Service emulator stopped"))
  yield* Console.log(banner(emulator, options))
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.catchTag("EmulatorError", (error) =>
    Console.error(`error: ${error.message}\nRun \`service-sdk-emulator --help\` to see the options.`).pipe(
      Effect.zipRight(Effect.sync(() => (process.exitCode = 2)))
    )
  )
)

// Ctrl-C (or SIGTERM) interrupts `main`, whose scope stops the server at once. Should stopping ever take longer than
// this, the process exits anyway: a stop is never waited on for longer than a person would (issue 21 item 10).
const STOP_DEADLINE_MS = 5_000
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    setTimeout(() => {
      process.stderr.write(`service-sdk-emulator: did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting\n`)
      process.exit(1)
    }, STOP_DEADLINE_MS).unref()
  })
}

NodeRuntime.runMain(main, { disableErrorReporting: false })
