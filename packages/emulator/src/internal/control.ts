import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { EmulatorConfig, Fault } from "../Emulator.js"
import { decodeFault } from "./faults.js"
import { LOCAL_FILE } from "./fixtures.js"
import { isLoopbackAddress, isLoopbackHost, json, mediaType, methods } from "./http.js"
import type { EmulatorState } from "./state.js"

const PlaybackSchema = Schema.Struct({
  trackId: Schema.String,
  isPlaying: Schema.optionalWith(Schema.Boolean, { exact: true }),
  progressMs: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { exact: true })
})

/** @internal */
export const ConfigSchema = Schema.Struct({
  tokenLifetime: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 31_536_000)), { exact: true }),
  refreshTokenLifetime: Schema.optionalWith(Schema.NullOr(Schema.Int.pipe(Schema.between(1, 315_360_000))), {
    exact: true
  }),
  rotateRefreshTokens: Schema.optionalWith(Schema.Boolean, { exact: true }),
  autoApprove: Schema.optionalWith(Schema.Boolean, { exact: true }),
  requirePkce: Schema.optionalWith(Schema.Boolean, { exact: true }),
  playback: Schema.optionalWith(Schema.NullOr(PlaybackSchema), { exact: true })
})

/** Checks a config update (also the programmatic one) against the schema and the catalogue. @internal */
export const decodeConfig = (state: EmulatorState, input: unknown): Effect.Effect<EmulatorConfig, string> =>
  Schema.decodeUnknown(ConfigSchema, { onExcessProperty: "error" })(input).pipe(
    Effect.mapError((error) => ParseResult.TreeFormatter.formatErrorSync(error)),
    Effect.filterOrFail(
      (config) =>
        config.playback === undefined ||
        config.playback === null ||
        state.catalog.tracks.has(config.playback.trackId) ||
        config.playback.trackId === LOCAL_FILE.key,
      (config) => `Unknown track id for playback: ${config.playback?.trackId}`
    )
  )

/** Applies a checked config update. @internal */
export const applyConfig = (state: EmulatorState, config: EmulatorConfig): void => {
  state.config = {
    tokenLifetime: config.tokenLifetime ?? state.config.tokenLifetime,
    refreshTokenLifetime:
      config.refreshTokenLifetime === undefined ? state.config.refreshTokenLifetime : config.refreshTokenLifetime,
    rotateRefreshTokens: config.rotateRefreshTokens ?? state.config.rotateRefreshTokens,
    autoApprove: config.autoApprove ?? state.config.autoApprove,
    requirePkce: config.requirePkce ?? state.config.requirePkce,
    playback: config.playback === undefined ? state.config.playback : config.playback
  }
}

/** @internal */
export const currentConfig = (state: EmulatorState) => ({
  ...state.config,
  tokenLatencyMs: state.options.tokenLatencyMs
})

const controlError = (status: number, message: string) => json({ error: message }, status)

/** The largest control request body: faults and config are a few hundred bytes. */
export const MAX_CONTROL_BODY_BYTES = 64 * 1024

class TooLarge {
  readonly _tag = "TooLarge"
}

const jsonBody = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
  Effect.flatMap(
    request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(FileSystem.Size(MAX_CONTROL_BODY_BYTES))),
      Effect.catchAll((error) =>
        error.reason === "Decode" && String(error.cause).includes("maxBytes exceeded")
          ? Effect.fail(new TooLarge())
          : Effect.succeed("")
      )
    ),
    (text) => {
      if (text.trim() === "") return Effect.succeed<unknown>({})
      try {
        return Effect.succeed<unknown>(JSON.parse(text))
      } catch {
        return Effect.fail("Body must be JSON")
      }
    }
  )
)

/**
 * A control POST: only with `Content-Type: application/json` (403 otherwise), which a web page cannot send
 * cross-origin without a preflight (text/plain and form bodies it can), and with a declared length (411 otherwise).
 */
const jsonOnly = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (mediaType(request.headers["content-type"]) !== "application/json") {
      return Effect.succeed(controlError(403, "Control requests must have Content-Type: application/json"))
    }
    if (request.headers["content-length"] === undefined && request.headers["transfer-encoding"] !== undefined) {
      return Effect.succeed(
        json({ error: "Control request bodies need a Content-Length" }, 411, { connection: "close" })
      )
    }
    return handler
  })

/**
 * `curl -X POST …/reset`: no body, no Content-Type, and no sign of a browser. Browsers send `Origin` with every POST
 * (and `Sec-Fetch-Site`), so a web page still cannot reset the emulator with a body-less "simple" request.
 */
const emptyNonBrowserPost = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["content-type"] === undefined &&
  request.headers.origin === undefined &&
  request.headers["sec-fetch-site"] === undefined &&
  request.headers["transfer-encoding"] === undefined &&
  Number(request.headers["content-length"] ?? "0") === 0

const reset = (state: EmulatorState) =>
  Effect.sync(() => {
    state.reset()
    return json({ ok: true })
  })

const withBody = (
  handle: (body: unknown) => Effect.Effect<HttpServerResponse.HttpServerResponse, string>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  jsonOnly(
    jsonBody.pipe(
      Effect.flatMap(handle),
      Effect.catchAll((failure) =>
        Effect.succeed(failure instanceof TooLarge ? tooLarge() : controlError(400, failure))
      )
    )
  )

const tooLarge = () =>
  json({ error: `Control request bodies are limited to ${MAX_CONTROL_BODY_BYTES} bytes` }, 413, {
    connection: "close"
  })

const notAllowed = (allow: string, method: string) =>
  json({ error: `Method ${method} not allowed; use ${allow}` }, 405, { allow })

const pendingFaults = (state: EmulatorState) => ({
  token: state.faults.token.reduce((n, queued) => n + queued.remaining, 0),
  api: state.faults.api.reduce((n, queued) => n + queued.remaining, 0)
})

const queuedFaults = (state: EmulatorState): ReadonlyArray<Fault & { readonly remaining: number }> =>
  [...state.faults.token, ...state.faults.api].map((queued) => ({ ...queued.fault, remaining: queued.remaining }))

/**
 * The control API under `/__emulator/`, for loopback clients only.
 *
 * @internal
 */
export const controlRouter = (state: EmulatorState) =>
  HttpRouter.empty.pipe(
    HttpRouter.all(
      "/stats",
      methods({ GET: Effect.sync(() => json(state.stats(), 200, { "cache-control": "no-store" })) }, notAllowed)
    ),
    HttpRouter.all(
      "/faults",
      methods(
        {
          GET: Effect.sync(() => json({ pending: pendingFaults(state), faults: queuedFaults(state) })),
          POST: withBody((body) =>
            Effect.map(decodeFault(body), (fault) => {
              state.enqueueFault(fault)
              return json({ ok: true, pending: pendingFaults(state) })
            })
          ),
          DELETE: Effect.sync(() => {
            state.faults.token.length = 0
            state.faults.api.length = 0
            return json({ ok: true, pending: pendingFaults(state) })
          })
        },
        notAllowed
      )
    ),
    HttpRouter.all(
      "/revoke",
      methods(
        {
          POST: withBody((body) => {
            const token = (body as { readonly token?: unknown }).token
            return typeof token === "string" && token !== ""
              ? Effect.succeed(json({ revoked: state.revoke(token) }))
              : Effect.fail('Body must be JSON {"token": string}')
          })
        },
        notAllowed
      )
    ),
    HttpRouter.all(
      "/config",
      methods(
        {
          GET: Effect.sync(() => json(currentConfig(state))),
          POST: withBody((body) =>
            Effect.map(decodeConfig(state, body), (config) => {
              applyConfig(state, config)
              return json(currentConfig(state))
            })
          )
        },
        notAllowed
      )
    ),
    HttpRouter.all(
      "/reset",
      methods(
        {
          POST: Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
            emptyNonBrowserPost(request) ? reset(state) : jsonOnly(reset(state))
          )
        },
        notAllowed
      )
    )
  )

/**
 * Guards the control router: 403 for non-loopback peers, JSON 404 for unknown control paths.
 *
 * @internal
 */
export const controlApp = (state: EmulatorState) => {
  const router = controlRouter(state).pipe(
    Effect.catchTag("RouteNotFound", () => Effect.succeed(controlError(404, "Unknown control endpoint")))
  )
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (!isLoopbackAddress(Option.getOrUndefined(request.remoteAddress))) {
      return Effect.succeed(controlError(403, "The control API only answers loopback clients"))
    }
    // DNS rebinding: a page on an attacker's name that resolves to 127.0.0.1 sends its own name as Host.
    if (!isLoopbackHost(request.headers.host)) {
      return Effect.succeed(controlError(403, "The control API only answers requests for a loopback Host"))
    }
    const length = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(length) && length > MAX_CONTROL_BODY_BYTES) return Effect.succeed(tooLarge())
    return router
  })
}
