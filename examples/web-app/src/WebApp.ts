/**
 * Starts the web app on a Node HTTP server: the sign-in's protocol steps (`OAuthClient`), per-user tokens
 * (`UserTokens`) and sessions wired to the routes of `App.ts`.
 *
 * @since 1.0.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import type { ServeError } from "@effect/platform/HttpServerError"
import { RedisTokenStore } from "@service-sdk/redis"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import * as Http from "node:http"
import {
  ConfigurationError,
  OAuthClient,
  type TokenCache,
  TokenCacheError,
  TokenStore,
  UserTokens
} from "@service-sdk/effect"
import { app, Settings } from "./App.js"
import * as SessionStore from "./Sessions.js"

/**
 * @since 1.0.0
 */
export interface WebAppOptions {
  /** default 0 (a free port) */
  readonly port?: number | undefined
  /** the interface to bind, default `127.0.0.1` */
  readonly host?: string | undefined
  /** the address browsers use, default `http://<host>:<port>`; the redirect URI is `<baseUrl>/callback` */
  readonly baseUrl?: string | undefined
  /** the Service; each falls back to the SDK's environment variables (`SERVICE_SDK_CLIENT_ID`, …) */
  readonly clientId?: string | undefined
  readonly clientSecret?: string | undefined
  readonly authUrl?: string | undefined
  readonly apiUrl?: string | undefined
  readonly publicClient?: boolean | undefined
  /** default `user-read-private user-read-email user-library-read` */
  readonly scope?: ReadonlyArray<string> | undefined
  /** the users' tokens: this store (default: `TokenStore.memory()`, or Redis with `redisUrl`) */
  readonly tokenStore?: ((userId: string) => TokenCache.TokenCache) | undefined
  /** keep tokens and sessions in Redis (`RedisTokenStore`) instead of this process's memory */
  readonly redisUrl?: string | undefined
  /** the Redis key prefix, default `web-app:` */
  readonly redisPrefix?: string | undefined
  /** saved tracks on the home page, default 10 */
  readonly tracksShown?: number | undefined
  /** default 12 hours */
  readonly sessionTtl?: Duration.DurationInput | undefined
  /** how long a user's token state stays in memory without use, default 5 minutes (`UserTokens`) */
  readonly idleTimeToLive?: Duration.DurationInput | undefined
}

/**
 * The running app.
 *
 * @since 1.0.0
 */
export interface RunningWebApp {
  /** e.g. `http://127.0.0.1:3000` */
  readonly url: string
  readonly store: "memory" | "redis"
}

/**
 * @since 1.0.0
 */
export const DEFAULT_SCOPE: ReadonlyArray<string> = ["user-read-private", "user-read-email", "user-library-read"]

const positiveInt = (name: string, value: number) =>
  Number.isInteger(value) && value > 0
    ? Effect.void
    : Effect.fail(new ConfigurationError({ message: `${name} must be a positive integer, got ${String(value)}` }))

/**
 * Starts the app in the current scope (closing it stops the server and releases the store).
 *
 * @since 1.0.0
 */
export const make = (
  options: WebAppOptions = {}
): Effect.Effect<RunningWebApp, ConfigurationError | TokenCacheError, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const tracksShown = options.tracksShown ?? 10
    yield* positiveInt("tracksShown", tracksShown)
    const host = options.host ?? "127.0.0.1"
    const nodeServer = Http.createServer()
    const server = yield* NodeHttpServer.make(() => nodeServer, { port: options.port ?? 0, host }).pipe(
      Effect.mapError((error) => listenError(error, host, options.port ?? 0))
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const baseUrl = (options.baseUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, "")
    const scope = options.scope ?? DEFAULT_SCOPE
    const service = {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      authUrl: options.authUrl,
      publicClient: options.publicClient,
      redirectUri: `${baseUrl}/callback`,
      scope
    }

    const redis = options.redisUrl === undefined ? undefined : yield* connect(options.redisUrl)
    const prefix = options.redisPrefix ?? "web-app:"
    const store =
      options.tokenStore ??
      (redis === undefined
        ? yield* TokenStore.memory()
        : yield* RedisTokenStore.make({ client: redis, prefix: `${prefix}tokens:` }))
    const sessions =
      redis === undefined
        ? yield* SessionStore.memory()
        : SessionStore.redis({ client: redis, prefix: `${prefix}sessions:` })

    // the protocol steps of a sign-in (nothing kept), and the users' tokens (kept and renewed in the store)
    const oauth = yield* OAuthClient.make(service)
    const userTokens = yield* UserTokens.make({ ...service, store, idleTimeToLive: options.idleTimeToLive })
    yield* HttpServer.serveEffect(app).pipe(
      Effect.provideService(HttpServer.HttpServer, server),
      Effect.provideService(Settings, {
        baseUrl,
        apiUrl: options.apiUrl,
        scope,
        tracksShown,
        sessionTtl: Duration.decode(options.sessionTtl ?? "12 hours"),
        pendingTtl: Duration.minutes(10)
      }),
      Effect.provideService(SessionStore.Sessions, sessions),
      Effect.provideService(OAuthClient.OAuthClient, oauth),
      Effect.provideService(UserTokens, userTokens)
    )
    // runs first (added after the handler): stop accepting and drop every connection in one step, so no keep-alive
    // client holds the server's own close open (it would wait for every connection); bounded all the same
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        nodeServer.close(() => resume(Effect.void))
        nodeServer.closeAllConnections()
      }).pipe(Effect.timeout("2 seconds"), Effect.ignore)
    )
    return { url: baseUrl, store: redis === undefined ? "memory" : "redis" } as const
  })

/** A listen failure, said plainly (the platform's ServeError has no message of its own). */
const listenError = (error: ServeError, host: string, port: number): ConfigurationError => {
  const code = (error.cause as { readonly code?: unknown } | undefined)?.code
  return new ConfigurationError({
    message:
      code === "EADDRINUSE"
        ? `port ${port} is already in use on ${host} (set PORT to another port)`
        : `could not listen on ${host}:${port}${typeof code === "string" ? ` (${code})` : ""}`
  })
}

/** An ioredis connection owned by the app, closed with its scope; fails fast when Redis cannot be reached. */
const connect = (url: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: false })
        try {
          await client.connect()
        } catch (cause) {
          client.disconnect()
          throw cause
        }
        return client
      },
      catch: (cause) =>
        new TokenCacheError({
          message: `could not connect to Redis at ${redactUrl(url)}`,
          cause: new Error(cause instanceof Error ? cause.message : "unknown error")
        })
    }),
    (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
  )

const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "an invalid URL"
  }
}

/**
 * @since 1.0.0
 */
export const noneIfEmpty = (value: string | undefined): string | undefined =>
  Option.getOrUndefined(Option.filter(Option.fromNullable(value), (text) => text.trim() !== ""))
