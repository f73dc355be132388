import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import { runPromise, startScoped } from "@service-sdk/effect/bridge"
import type {
  ClientRegistration,
  Emulator,
  EmulatorConfig,
  EmulatorHandle,
  EmulatorOptions,
  Fault
} from "../Emulator.js"
import { EmulatorError } from "../EmulatorError.js"
import { apiApp } from "./api.js"
import { authorizeEndpoint, decisionEndpoint, redirectUriError } from "./authorize.js"
import { makeCatalog } from "./catalog.js"
import { applyConfig, controlApp, decodeConfig } from "./control.js"
import { decodeFault } from "./faults.js"
import { LOCAL_FILE, TRACKS } from "./fixtures.js"
import { withCors } from "./cors.js"
import { json, methods, withRequestLog } from "./http.js"
import { tokenEndpoint } from "./oauth.js"
import { EmulatorState, type ResolvedOptions } from "./state.js"
import { signIn } from "./users.js"

/** @internal */
export const defaultClientId = "emulator-client"

/** @internal */
export const defaultClientSecret = "emulator-secret"

/** @internal */
export const defaultPublicClientId = "emulator-public-client"

/** @internal */
export const localFileTrackId: string = LOCAL_FILE.key

const HOST = "127.0.0.1"

const MAX_BODY_BYTES = 1024 * 1024

const TRACK_IDS: ReadonlySet<string> = new Set(TRACKS.map((track) => track.id))

/** A track the player can report: a catalogue track or the local file. */
const isPlayable = (trackId: string) => TRACK_IDS.has(trackId) || trackId === LOCAL_FILE.key

const invalid = (message: string) => Effect.fail(new EmulatorError({ message: `Invalid emulator options: ${message}` }))

const isNonNegativeInt = (n: unknown, max: number): n is number =>
  typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= max

const resolveOptions = (
  options: EmulatorOptions
): Effect.Effect<ResolvedOptions & { readonly port: number }, EmulatorError> => {
  const port = options.port ?? 0
  if (!isNonNegativeInt(port, 65_535)) return invalid(`port must be an integer from 0 to 65535, got ${String(port)}`)
  if (options.host !== undefined && options.host !== HOST) {
    return invalid(`host must be ${HOST} (the emulator only listens on loopback), got ${String(options.host)}`)
  }
  const tokenLifetime = options.tokenLifetime ?? 3600
  if (!isNonNegativeInt(tokenLifetime, 31_536_000)) {
    return invalid(`tokenLifetime must be a whole number of seconds, got ${String(tokenLifetime)}`)
  }
  const refreshTokenLifetime = options.refreshTokenLifetime ?? null
  if (
    refreshTokenLifetime !== null &&
    !(isNonNegativeInt(refreshTokenLifetime, 315_360_000) && refreshTokenLifetime > 0)
  ) {
    return invalid(
      `refreshTokenLifetime must be a positive whole number of seconds, got ${String(refreshTokenLifetime)}`
    )
  }
  const tokenLatencyMs = options.tokenLatencyMs ?? 0
  if (typeof tokenLatencyMs !== "number" || !Number.isFinite(tokenLatencyMs) || tokenLatencyMs < 0) {
    return invalid(`tokenLatencyMs must be a non-negative number, got ${String(tokenLatencyMs)}`)
  }
  const playback = options.playback ?? null
  if (playback !== null && !isPlayable(playback.trackId)) {
    return invalid(`playback.trackId is not a catalogue track or the local file: ${playback.trackId}`)
  }
  const clients = new Map<string, ClientRegistration>([
    [defaultClientId, { clientId: defaultClientId, clientSecret: defaultClientSecret }],
    [defaultPublicClientId, { clientId: defaultPublicClientId }]
  ])
  for (const client of options.clients ?? []) {
    if (typeof client.clientId !== "string" || client.clientId === "" || client.clientId.includes(":")) {
      return invalid("every client needs a non-empty clientId without ':'")
    }
    // no secret: a public client
    if (client.clientSecret !== undefined && (typeof client.clientSecret !== "string" || client.clientSecret === "")) {
      return invalid(`client ${client.clientId} needs a non-empty clientSecret, or none for a public client`)
    }
    // the Service's rules apply to registration too (a loopback URI may be registered without a port)
    for (const uri of client.redirectUris ?? []) {
      const problem = typeof uri === "string" ? redirectUriError(uri) : "not a string"
      if (problem !== undefined) return invalid(`client ${client.clientId}: redirect URI ${String(uri)}: ${problem}`)
    }
    clients.set(client.clientId, client)
  }
  return Effect.succeed({
    port,
    clients,
    defaultClient: clients.get(defaultClientId)!,
    tokenLatencyMs,
    config: {
      tokenLifetime,
      refreshTokenLifetime,
      rotateRefreshTokens: options.rotateRefreshTokens ?? false,
      autoApprove: options.autoApprove ?? false,
      requirePkce: options.requirePkce ?? false,
      playback
    }
  })
}

const index = (state: EmulatorState, authUrl: string) =>
  methods(
    {
      GET: Effect.sync(() =>
        json({
          service: "service-sdk emulator",
          authUrl,
          apiUrl: state.catalog.apiUrl,
          tokenEndpoint: `${authUrl}/api/token`,
          authorizationEndpoint: `${authUrl}/authorize`,
          control: `${authUrl}/__emulator/`,
          clientId: state.options.defaultClient.clientId
        })
      )
    },
    (allow) => json({ error: "Method not allowed" }, 405, { allow })
  )

/** The whole server: accounts service, data API and control API on one router. @internal */
export const makeApp = (state: EmulatorState, authUrl: string) =>
  HttpRouter.empty.pipe(
    HttpRouter.all("/", index(state, authUrl)),
    HttpRouter.all("/api/token", withCors(["POST"])(tokenEndpoint(state))),
    HttpRouter.all("/authorize", authorizeEndpoint(state)),
    HttpRouter.all("/authorize/decision", decisionEndpoint(state)),
    HttpRouter.mountApp("/__emulator", controlApp(state)),
    HttpRouter.mountApp("/v1", withCors(["GET", "POST", "PUT", "DELETE"])(apiApp(state)), { includePrefix: true }),
    Effect.catchTag("RouteNotFound", () => Effect.succeed(json({ error: "Not found" }, 404))),
    // a bug must cost one response, never the server
    Effect.catchAllDefect(() => Effect.succeed(json({ error: "server_error" }, 500)))
  )

/**
 * Stops `server` at once. Added after `serveEffect`, so it runs before the platform's own finalizers (which remove
 * the request handler, then `server.close()` and wait for every open connection): stopping to accept and dropping
 * every connection happen in one synchronous step, so no connection can come in after the handler is gone, get no
 * answer, and hold the close open — a keep-alive client would keep the process alive until its own timeout, and
 * Ctrl-C would seem ignored. Bounded all the same. The platform's close then finds the server closed.
 */
const stopServer = (server: Http.Server): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  }).pipe(Effect.timeout("2 seconds"), Effect.ignore)

const listenError = (port: number) => (cause: unknown) => {
  const code = (cause as { readonly cause?: { readonly code?: unknown } }).cause?.code
  return new EmulatorError({
    message:
      code === "EADDRINUSE"
        ? `Port ${port} is already in use on ${HOST}`
        : `The emulator could not listen on ${HOST}:${port}${typeof code === "string" ? ` (${code})` : ""}`,
    cause
  })
}

/** @internal */
export const make = (options: EmulatorOptions = {}): Effect.Effect<Emulator.Service, EmulatorError, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* resolveOptions(options)
    const nodeServer = Http.createServer()
    const server = yield* NodeHttpServer.make(() => nodeServer, { port: resolved.port, host: HOST }).pipe(
      Effect.mapError(listenError(resolved.port))
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : resolved.port
    const authUrl = `http://${HOST}:${port}`
    const apiUrl = `${authUrl}/v1`
    const state = new EmulatorState(resolved, makeCatalog(apiUrl))
    yield* HttpServer.serveEffect(withRequestLog(options.onRequest)(makeApp(state, authUrl))).pipe(
      Effect.provideService(HttpServer.HttpServer, server),
      HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
      HttpMiddleware.withTracerDisabledWhenEffect(() => true)
    )
    yield* Effect.addFinalizer(() => stopServer(nodeServer))
    yield* Effect.logDebug(`emulator listening on ${authUrl}`)
    const service: Emulator.Service = {
      authUrl,
      apiUrl,
      port,
      clientId: resolved.defaultClient.clientId,
      clientSecret: defaultClientSecret,
      publicClientId: defaultPublicClientId,
      stats: Effect.sync(() => state.stats()),
      injectFault: (fault: Fault) =>
        decodeFault(fault).pipe(
          Effect.mapError((message) => new EmulatorError({ message: `Invalid fault: ${message}` })),
          Effect.map((checked) => state.enqueueFault(checked))
        ),
      configure: (config: EmulatorConfig) =>
        decodeConfig(state, config).pipe(
          Effect.mapError((message) => new EmulatorError({ message: `Invalid config: ${message}` })),
          Effect.map((checked) => applyConfig(state, checked))
        ),
      revoke: (token: string) => Effect.sync(() => state.revoke(token)),
      signIn: (options) => signIn(state, options),
      apiRequestsByUser: Effect.sync(() => Object.fromEntries(state.apiByUser)),
      reset: Effect.sync(() => state.reset())
    }
    return service
  })

/** @internal */
export const start = async (options: EmulatorOptions = {}): Promise<EmulatorHandle> => {
  const { value: service, close } = await startScoped(make(options))
  return {
    authUrl: service.authUrl,
    apiUrl: service.apiUrl,
    port: service.port,
    clientId: service.clientId,
    clientSecret: service.clientSecret,
    publicClientId: service.publicClientId,
    stats: () => runPromise(service.stats),
    injectFault: (fault) => runPromise(service.injectFault(fault)),
    configure: (config) => runPromise(service.configure(config)),
    revoke: (token) => runPromise(service.revoke(token)),
    signIn: (options) => runPromise(service.signIn(options)),
    apiRequestsByUser: () => runPromise(service.apiRequestsByUser),
    reset: () => runPromise(service.reset),
    close,
    [Symbol.asyncDispose]: close
  }
}
