/**
 * What the commands of `service-sdk` do (`commands.ts` declares them and loads this module when one runs).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Emulator } from "@service-sdk/emulator"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { homedir } from "node:os"
import { join } from "node:path"
import {
  AuthenticationError,
  AuthorizationCode,
  ConfigurationError,
  authorizeLocal,
  maskToken,
  OAuthClient,
  ServiceClient,
  TokenCache
} from "service-sdk"
import { demo } from "./demo.js"
import { visit } from "./loopback.js"
import { forgetLogin, readLogin, saveLogin, secureCacheDirectory } from "./login.js"
import type { EmulatorFlags, LoginFlags, TokenFlags, WhoamiFlags } from "./commands.js"
import { PROGRAM } from "./help.js"
import { authUrlFromEnv, DEFAULT_AUTH_URL, publicClientFromEnv, resolveTarget } from "./target.js"
import { oneLine } from "./terminal.js"

const http = NodeHttpClient.layerUndici

const defaultCachePath = () =>
  join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "service-sdk", "tokens.json")

export { demo }

/** What a bearer token may hold (RFC 6750 §2.1 `b64token`, JWTs): visible ASCII, nothing else. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/

export const token = (flags: TokenFlags) =>
  Effect.gen(function* () {
    const target = yield* resolveTarget(flags)
    // one protocol step, nothing kept: the command prints the token and ends
    const oauth = yield* OAuthClient.make({
      clientId: target.clientId,
      clientSecret: target.clientSecret,
      authUrl: target.authUrl
    })
    const info = yield* oauth.clientCredentials({ scope: Option.getOrUndefined(flags.scope) })
    const token = Redacted.value(info.accessToken)
    if (!VISIBLE_ASCII.test(token)) {
      // a terminal would act on its control characters, and a pipe would get a token that is not the real one
      return yield* new AuthenticationError({
        message:
          "the Service answered with an access token that is not visible ASCII (RFC 6750 §2.1): it is neither used nor printed"
      })
    }
    const now = (yield* Clock.currentTimeMillis) / 1000
    const expiresIn = Math.round(info.expiresAt - now)
    const shown = flags.reveal ? token : maskToken(token)
    if (flags.json) {
      yield* Console.log(
        JSON.stringify({
          access_token: shown,
          token_type: "Bearer",
          expires_at: Math.round(info.expiresAt),
          expires_in: expiresIn,
          ...(info.scope ? { scope: info.scope } : {})
        })
      )
    } else if (flags.reveal) {
      // the one place a raw token is printed: asked for explicitly, alone on stdout, for piping
      yield* Console.log(token)
    } else {
      yield* Console.log(
        `access token ${shown}, expires in ${expiresIn} s${info.scope ? `, scope: ${oneLine(info.scope)}` : ""}`
      )
    }
  }).pipe(Effect.scoped, Effect.provide(http))

export const login = (flags: LoginFlags) =>
  Effect.gen(function* () {
    const publicClient = flags.publicClient || (yield* publicClientFromEnv)
    const target = yield* resolveTarget(flags, { autoApprove: true }, { publicClient })
    // a throwaway emulator's tokens are worth nothing after this command: kept only where asked to (--cache)
    const path =
      target.emulator !== undefined && Option.isNone(flags.cache)
        ? undefined
        : Option.getOrElse(flags.cache, defaultCachePath)
    if (path !== undefined) yield* secureCacheDirectory(path)
    const tokenCache = path === undefined ? yield* TokenCache.memory() : yield* TokenCache.file(path)
    // PKCE always (authorizeLocal): for a public client it is the only proof, for a confidential one a second
    if (path !== undefined) yield* forgetLogin(path)
    const layer = AuthorizationCode.layer({
      clientId: target.clientId,
      clientSecret: target.clientSecret,
      publicClient: target.publicClient,
      authUrl: target.authUrl,
      scope: flags.scope,
      // no --port: a loopback redirect URI without one, so each sign-in listens on a free port (RFC 8252 §7.3)
      redirectUri: `http://127.0.0.1${Option.match(flags.port, { onNone: () => "", onSome: (port) => `:${port}` })}/callback`,
      tokenCache
    }).pipe(Layer.provide(http))
    const token = yield* authorizeLocal({
      openBrowser: !flags.noBrowser && target.emulator === undefined,
      onAuthorizationUrl: (url) =>
        target.emulator !== undefined && !flags.noBrowser
          ? Effect.asVoid(Effect.forkDaemon(visit(url)))
          : Console.log(`Open this URL to authorize:\n  ${url}`)
    }).pipe(Effect.provide(layer))
    if (path !== undefined) yield* saveLogin(path, { clientId: target.clientId, publicClient: target.publicClient })
    yield* Console.log(
      `logged in${target.publicClient ? " as a public client (no secret)" : ""}: access token ${maskToken(Redacted.value(token.accessToken))}${
        token.scope ? ` (scope: ${oneLine(token.scope)})` : ""
      }; ${path === undefined ? "not saved" : `tokens saved to ${path}`}`
    )
    if (target.emulator !== undefined) {
      yield* Console.log(
        `note: --emulator's emulator stops with this command, so \`${PROGRAM} whoami\` cannot use this login. For one ` +
          `that lasts, run \`${PROGRAM} emulator\` in another terminal and follow what it prints.`
      )
    }
  }).pipe(Effect.scoped)

/** The `auth_url` a saved token entry was written for, if it says. */
const savedAuthUrl = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.map((text) => {
      try {
        const json = JSON.parse(text) as { readonly auth_url?: unknown }
        return typeof json.auth_url === "string" ? json.auth_url : undefined
      } catch {
        return undefined
      }
    }),
    Effect.orElseSucceed(() => undefined)
  )

const trimSlash = (url: string) => url.replace(/\/+$/, "")

export const whoami = (flags: WhoamiFlags) =>
  Effect.gen(function* () {
    if (flags.emulator) {
      return yield* new ConfigurationError({
        message:
          `whoami --emulator would ask a new, empty emulator, which knows no login. Run \`${PROGRAM} emulator\` in ` +
          `another terminal, then the login and whoami commands it prints`
      })
    }
    const path = Option.getOrElse(flags.cache, defaultCachePath)
    const fs = yield* FileSystem.FileSystem
    // the login remembers its client: a public client refreshes without a secret, with no flag needed again
    const saved = yield* readLogin(path)
    const publicClient =
      flags.publicClient ||
      (yield* publicClientFromEnv) ||
      (saved?.publicClient === true && Option.isNone(flags.clientSecret))
    const target = yield* resolveTarget(flags, {}, { publicClient, savedClientId: saved?.clientId })
    if (!(yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false)))) {
      return yield* new AuthenticationError({
        message: `not signed in (no saved login at ${path}): run \`${PROGRAM} login\` first`
      })
    }
    yield* secureCacheDirectory(path)
    // a login made against another accounts service (another emulator, the real one) does not count here
    const loggedInAt = yield* savedAuthUrl(path)
    const authUrl = target.authUrl ?? (yield* authUrlFromEnv)
    if (loggedInAt !== undefined && trimSlash(loggedInAt) !== trimSlash(authUrl)) {
      return yield* new AuthenticationError({
        message: `the saved login at ${path} is for ${loggedInAt}, not ${authUrl}: pass --auth-url ${loggedInAt} (or set SERVICE_SDK_AUTH_URL), or run \`${PROGRAM} login\` again`
      })
    }
    const tokenCache = yield* TokenCache.file(path)
    const layer = ServiceClient.layer({ apiUrl: target.apiUrl }).pipe(
      Layer.provideMerge(
        AuthorizationCode.layer({
          clientId: target.clientId,
          clientSecret: target.clientSecret,
          publicClient: target.publicClient,
          authUrl: target.authUrl,
          tokenCache,
          refreshTokenLifetime: refreshTokenLifetimeOf(authUrl)
        })
      ),
      Layer.provide(http)
    )
    const { me, endsAt } = yield* Effect.gen(function* () {
      const me = yield* Effect.flatMap(ServiceClient, (client) => client.users.me)
      const endsAt = yield* Effect.flatMap(AuthorizationCode, (provider) => provider.signInEndsAt)
      return { me, endsAt }
    }).pipe(
      Effect.provide(layer),
      // the SDK's words for "nothing usable is saved" are for programmers: say it for the command line
      Effect.catchIf(
        (error) => error._tag === "AuthenticationError" && /^no token\b/.test(error.message),
        () =>
          new AuthenticationError({
            message: `not signed in: the saved login at ${path} has no usable token for ${target.clientId}: run \`${PROGRAM} login\` again`
          })
      ),
      // a refresh token refused for good (the sign-in ended, or it was revoked): name the command at once
      Effect.catchIf(
        (error) => error._tag === "AuthenticationError" && /sign in again$/.test(error.message),
        (error) =>
          new AuthenticationError({
            message: `${error.message}: run \`${PROGRAM} login\``,
            status: (error as AuthenticationError).status,
            payload: (error as AuthenticationError).payload
          })
      )
    )
    // server-supplied text: one line, no control characters
    yield* Console.log(
      oneLine(
        `${me.display_name ?? me.id} (${me.id})${me.email ? ` <${me.email}>` : ""}${me.country ? `, ${me.country}` : ""}${
          me.product ? `, ${me.product}` : ""
        }`
      )
    )
    if (Option.isSome(endsAt)) {
      const days = Math.floor((endsAt.value.getTime() - (yield* Clock.currentTimeMillis)) / 86_400_000)
      yield* Console.log(
        `sign-in ends ${endsAt.value.toISOString().replace(/\.\d{3}Z$/, "Z")} (in ${days} day${days === 1 ? "" : "s"}; then run \`${PROGRAM} login\` again)`
      )
    }
  }).pipe(Effect.scoped)

/**
 * How long a sign-in lasts on the Service: a refresh token ends 180 days after the user signed in, and refreshing
 * does not extend it. Elsewhere (an emulator, another server) only the server's `refresh_token_expires_in` tells.
 */
const SERVICE_REFRESH_TOKEN_LIFETIME = "180 days"

const refreshTokenLifetimeOf = (authUrl: string) =>
  trimSlash(authUrl) === DEFAULT_AUTH_URL ? SERVICE_REFRESH_TOKEN_LIFETIME : undefined

/** `--client id:secret` (or `id` alone: a public client), as `service-sdk-emulator` reads it. */
const clientRegistration = (spec: string) =>
  Effect.gen(function* () {
    const colon = spec.indexOf(":")
    if (colon === -1 && spec !== "") return { clientId: spec }
    if (colon <= 0 || colon === spec.length - 1) {
      return yield* new ConfigurationError({
        message: `--client must look like id:secret (or id alone), not "${spec}"`
      })
    }
    return { clientId: spec.slice(0, colon), clientSecret: spec.slice(colon + 1) }
  })

/** What `service-sdk emulator` prints: where it is, and the commands that sign in to it from another terminal. */
export const emulatorBanner = (emulator: Emulator.Service, autoApprove: boolean): string =>
  [
    `Service emulator running at ${emulator.authUrl} (Ctrl-C to stop)`,
    `  accounts service: ${emulator.authUrl}   (token endpoint /api/token, consent page /authorize)`,
    `  data API:         ${emulator.apiUrl}`,
    `  client:           ${emulator.clientId}, secret ${emulator.clientSecret}`,
    `  public client:    ${emulator.publicClientId}   (no secret: PKCE only)`,
    `  consent page:     ${autoApprove ? "approved at once (--auto-approve)" : "shown in the browser: press Approve"}`,
    "",
    "In another terminal:",
    `  export SERVICE_SDK_AUTH_URL=${emulator.authUrl} SERVICE_SDK_API_URL=${emulator.apiUrl}`,
    `  export SERVICE_SDK_CLIENT_ID=${emulator.clientId} SERVICE_SDK_CLIENT_SECRET=${emulator.clientSecret}`,
    `  ${PROGRAM} token`,
    `  ${PROGRAM} login`,
    `  ${PROGRAM} whoami`,
    "",
    "Or as a public client (no secret; PKCE only), after the same export lines:",
    `  ${PROGRAM} login --public-client --client-id ${emulator.publicClientId}`,
    `  ${PROGRAM} whoami`
  ].join("\n")

export const emulator = (flags: EmulatorFlags) =>
  Effect.gen(function* () {
    const clients = yield* Effect.forEach(flags.client, clientRegistration)
    const emulator = yield* Emulator.make({
      port: flags.port,
      autoApprove: flags.autoApprove,
      tokenLifetime: flags.tokenLifetime,
      rotateRefreshTokens: flags.rotateRefreshTokens,
      tokenLatencyMs: flags.tokenLatencyMs,
      requirePkce: flags.requirePkce,
      ...(clients.length === 0 ? {} : { clients })
    })
    yield* Effect.addFinalizer(() => Console.log("Service emulator stopped"))
    yield* Console.log(emulatorBanner(emulator, flags.autoApprove))
    return yield* Effect.never
  }).pipe(Effect.scoped)
