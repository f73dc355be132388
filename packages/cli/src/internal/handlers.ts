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
import { realpathSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, join } from "node:path"
import {
  AuthenticationError,
  AuthorizationCode,
  ConfigurationError,
  authorizeLocal,
  maskToken,
  OAuthClient,
  ServiceClient,
  TokenCache,
  TokenCacheError,
  TokenProvider
} from "@service-sdk/effect"
import { demo } from "./demo.js"
import { visit } from "./loopback.js"
import { forgetLogin, loginPath, readLogin, saveLogin, secureCacheDirectory } from "./login.js"
import type { EmulatorFlags, LoginFlags, LogoutFlags, TokenFlags, WhoamiFlags } from "./commands.js"
import { PROGRAM } from "./help.js"
import { inDays, isFinalRefusal, iso } from "@service-sdk/shared/signInEnd"
import { DEFAULT_AUTH_URL, publicClientFromEnv, resolveTarget } from "./target.js"
import { oneLine } from "./terminal.js"

const http = NodeHttpClient.layerUndici

const defaultCachePath = () =>
  join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "service-sdk", "tokens.json")

export { demo }

export const token = (flags: TokenFlags) =>
  Effect.gen(function* () {
    const target = yield* resolveTarget(flags)
    yield* Effect.logDebug(`token: client credentials for ${target.clientId} at ${target.authUrl}`)
    // one protocol step, nothing kept: the command prints the token and ends
    const oauth = yield* OAuthClient.make({
      clientId: target.clientId,
      clientSecret: target.clientSecret,
      authUrl: target.authUrl
    })
    const info = yield* oauth.clientCredentials({ scope: Option.getOrUndefined(flags.scope) })
    // visible ASCII (RFC 6750 §2.1): the SDK refuses any other token response, so it is safe to print
    const token = Redacted.value(info.accessToken)
    const now = (yield* Clock.currentTimeMillis) / 1000
    const expiresIn = Math.round(info.expiresAt - now)
    yield* Effect.logDebug(`token: got an access token of ${token.length} characters, expiring in ${expiresIn} s`)
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
    // a browser: the SDK prints the URL (once) and opens it; without one (--no-browser), only the URL, once
    const token = yield* authorizeLocal(
      flags.noBrowser
        ? { openBrowser: false, onAuthorizationUrl: (url) => Console.log(`Open this URL to authorize:\n  ${url}`) }
        : target.emulator !== undefined
          ? { openBrowser: false, onAuthorizationUrl: (url) => Effect.asVoid(Effect.forkDaemon(visit(url))) }
          : {}
    ).pipe(Effect.provide(layer))
    if (path !== undefined) yield* saveLogin(path, { clientId: target.clientId, publicClient: target.publicClient })
    yield* Effect.logDebug(
      `login: signed in${path === undefined ? "" : `, tokens saved to ${path}`}; asking /me who it is`
    )
    const who = yield* userOf(token.accessToken, target.apiUrl)
    yield* Console.log(
      [
        `Logged in as ${who}${target.publicClient ? " (a public client: no secret)" : ""}`,
        ...(token.scope ? [`  scope: ${oneLine(token.scope)}`] : []),
        path === undefined ? "  tokens: not saved" : `  tokens: saved to ${path} (\`${PROGRAM} logout\` forgets them)`
      ].join("\n")
    )
    if (target.emulator !== undefined) {
      yield* Console.log(
        `note: --emulator's emulator stops with this command, so \`${PROGRAM} whoami\` cannot use this login. For one ` +
          `that lasts, run \`${PROGRAM} emulator\` in another terminal and follow what it prints.`
      )
    }
  }).pipe(Effect.scoped)

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
    const tokenCache = yield* TokenCache.file(path)
    const layer = ServiceClient.layer({ apiUrl: target.apiUrl }).pipe(
      Layer.provideMerge(
        AuthorizationCode.layer({
          clientId: target.clientId,
          clientSecret: target.clientSecret,
          publicClient: target.publicClient,
          authUrl: target.authUrl,
          tokenCache,
          refreshTokenLifetime: refreshTokenLifetimeOf(target.authUrl)
        })
      ),
      Layer.provide(http)
    )
    yield* Effect.logDebug(`whoami: the saved login at ${path}, GET ${target.apiUrl ?? "the default API"}/me`)
    const { me, endsAt } = yield* Effect.gen(function* () {
      const me = yield* Effect.flatMap(ServiceClient, (client) => client.users.me)
      const endsAt = yield* Effect.flatMap(AuthorizationCode, (provider) => provider.signInEndsAt)
      return { me, endsAt }
    }).pipe(
      // the provider serves no entry written for another client or accounts service (another emulator, the real
      // one): "nothing usable is saved" (payload `no_token`), said for the command line
      Effect.catchIf(
        (error) => error._tag === "AuthenticationError" && error.payload?.error === "no_token",
        () =>
          Effect.flatMap(Effect.zip(AuthorizationCode, tokenCache.get), ([provider, saved]) => {
            const loggedInAt = Option.getOrUndefined(Option.flatMapNullable(saved, (entry) => entry.authUrl))
            return new AuthenticationError({
              message:
                loggedInAt !== undefined && loggedInAt !== provider.authUrl
                  ? `the saved login at ${path} is for ${loggedInAt}, not ${provider.authUrl}: pass --auth-url ${loggedInAt} (or set SERVICE_SDK_AUTH_URL), or run \`${PROGRAM} login\` again`
                  : `not signed in: the saved login at ${path} has no usable token for ${target.clientId}: run \`${PROGRAM} login\` again`
            })
          })
      ),
      // a refresh token refused for good (the sign-in ended, or it was revoked): name the command at once
      Effect.catchIf(
        (error): error is AuthenticationError => error._tag === "AuthenticationError" && isFinalRefusal(error),
        (error) =>
          new AuthenticationError({
            message: `${error.message}: run \`${PROGRAM} login\``,
            status: error.status,
            payload: error.payload
          })
      ),
      Effect.provide(layer)
    )
    // server-supplied text: one line, no control characters
    yield* Console.log(oneLine(`Logged in as ${describeUser(me)}`))
    if (Option.isSome(endsAt)) {
      // the words of the SDK's own warning (shared/signInEnd.ts)
      const end = endsAt.value.getTime() / 1000
      const now = (yield* Clock.currentTimeMillis) / 1000
      yield* Console.log(`sign-in ends ${iso(end)} (${inDays(end, now)}; then run \`${PROGRAM} login\` again)`)
    }
  }).pipe(Effect.scoped)

/**
 * How long a sign-in lasts on the Service: a refresh token ends 180 days after the user signed in, and refreshing
 * does not extend it. Elsewhere (an emulator, another server) only the server's `refresh_token_expires_in` tells.
 */
const SERVICE_REFRESH_TOKEN_LIFETIME = "180 days"

const refreshTokenLifetimeOf = (authUrl: string) =>
  authUrl.replace(/\/+$/, "") === DEFAULT_AUTH_URL ? SERVICE_REFRESH_TOKEN_LIFETIME : undefined

/** `emulator-user (Emulator User) <emulator-user@example.com>, SE, premium`: the id first, as gh names a login. */
const describeUser = (me: {
  readonly id: string
  readonly display_name?: string | null | undefined
  readonly email?: string | undefined
  readonly country?: string | undefined
  readonly product?: string | undefined
}) =>
  `${me.id}${me.display_name ? ` (${me.display_name})` : ""}${me.email ? ` <${me.email}>` : ""}${
    me.country ? `, ${me.country}` : ""
  }${me.product ? `, ${me.product}` : ""}`

/** Who a fresh token belongs to (`GET /me`); without the scope for it, says so instead of failing the login. */
const userOf = (accessToken: Redacted.Redacted<string>, apiUrl: string | undefined) =>
  Effect.flatMap(
    ServiceClient.makeWith(TokenProvider.static(accessToken), { apiUrl }),
    (client) => client.users.me
  ).pipe(
    Effect.map((me) => oneLine(describeUser(me))),
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logDebug(`login: /me failed: ${error.message}`),
        "a user this token cannot name (/me needs the user-read-private scope)"
      )
    ),
    Effect.provide(http)
  )

/** `logout`: removes the saved tokens and the client file, and says which. */
export const logout = (flags: LogoutFlags) =>
  Effect.gen(function* () {
    const path = Option.getOrElse(flags.cache, defaultCachePath)
    const fs = yield* FileSystem.FileSystem
    const removed: Array<string> = []
    for (const file of [path, loginPath(path)]) {
      if (!(yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false)))) continue
      yield* fs
        .remove(file)
        .pipe(
          Effect.mapError(
            (error) => new TokenCacheError({ message: `cannot remove ${file}: ${error.message}`, cause: error })
          )
        )
      removed.push(file)
    }
    yield* Effect.logDebug(`logout: looked for ${path} and ${loginPath(path)}`)
    yield* Console.log(
      removed.length === 0 ? `Not logged in: nothing saved at ${path}` : `Logged out: removed ${removed.join(" and ")}`
    )
  })

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

/**
 * How to type this CLI in another terminal: `service-sdk` when that name on the user's PATH is this bin, else
 * `npx service-sdk` (run in this directory, where npm finds the installed bin). The `node_modules/.bin` folders npm
 * and npx add to PATH for the process they start are not the user's PATH, so they do not count.
 */
export const invocation = (env: Readonly<Record<string, string | undefined>>, self: string | undefined): string => {
  if (self === undefined) return `npx ${PROGRAM}`
  const real = (path: string) => {
    try {
      return realpathSync(path)
    } catch {
      return undefined
    }
  }
  const me = real(self)
  const byNpm = env.npm_command !== undefined || env.npm_lifecycle_event !== undefined
  const onPath = (env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && !(byNpm && /node_modules[\\/]\.bin[\\/]?$/.test(dir)))
    .some((dir) => me !== undefined && real(join(dir, PROGRAM)) === me)
  return onPath ? PROGRAM : `npx ${PROGRAM}`
}

/** What `service-sdk emulator` prints: where it is, and the commands that sign in to it from another terminal. */
export const emulatorBanner = (
  emulator: Emulator.Service,
  options: { readonly autoApprove: boolean; readonly quiet: boolean; readonly run: string; readonly cwd: string }
): string =>
  [
    `Service emulator running at ${emulator.authUrl} (Ctrl-C to stop)`,
    `  accounts service: ${emulator.authUrl}   (token endpoint /api/token, consent page /authorize)`,
    `  data API:         ${emulator.apiUrl}`,
    `  client:           ${emulator.clientId}, secret ${emulator.clientSecret}`,
    `  public client:    ${emulator.publicClientId}   (no secret: PKCE only)`,
    `  consent page:     ${options.autoApprove ? "approved at once (--auto-approve)" : "shown in the browser: press Approve"}`,
    `  requests:         ${options.quiet ? "not logged (--quiet)" : "one line each on stderr (--quiet: none)"}`,
    "",
    options.run === PROGRAM ? "In another terminal:" : `In another terminal, in ${options.cwd}:`,
    `  export SERVICE_SDK_AUTH_URL=${emulator.authUrl} SERVICE_SDK_API_URL=${emulator.apiUrl}`,
    `  export SERVICE_SDK_CLIENT_ID=${emulator.clientId} SERVICE_SDK_CLIENT_SECRET=${emulator.clientSecret}`,
    `  ${options.run} token`,
    `  ${options.run} login`,
    `  ${options.run} whoami`,
    "",
    "Or as a public client (no secret; PKCE only), after the same export lines:",
    `  ${options.run} login --public-client --client-id ${emulator.publicClientId}`,
    `  ${options.run} whoami`
  ].join("\n")

/** One line per request on stderr, with the time. */
const logRequest = (line: string) => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
}

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
      ...(clients.length === 0 ? {} : { clients }),
      ...(flags.quiet ? {} : { onRequest: logRequest })
    })
    yield* Effect.addFinalizer(() => Console.log("Service emulator stopped"))
    yield* Console.log(
      emulatorBanner(emulator, {
        autoApprove: flags.autoApprove,
        quiet: flags.quiet,
        run: invocation(process.env, process.argv[1]),
        cwd: process.cwd()
      })
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
