/**
 * What the commands of `service-sdk` do (`commands.ts` declares them and loads this module when one runs).
 */
import type * as Command from "@effect/cli/Command"
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
  authorizeLocal,
  ClientCredentials,
  maskToken,
  ServiceClient,
  TokenCache
} from "service-sdk"
import { demo } from "./demo.js"
import { visit } from "./loopback.js"
import { forgetLogin, readLogin, saveLogin, secureCacheDirectory } from "./login.js"
import type { emulatorConfig, loginConfig, tokenConfig, whoamiConfig } from "./commands.js"
import { publicClientFromEnv, resolveTarget } from "./target.js"
import { oneLine } from "./terminal.js"

const http = NodeHttpClient.layerUndici

const defaultCachePath = () =>
  join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "service-sdk", "tokens.json")

export { demo }

/** What a bearer token may hold (RFC 6750 §2.1 `b64token`, JWTs): visible ASCII, nothing else. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/

export const token = (flags: Command.Command.ParseConfig<typeof tokenConfig>) =>
  Effect.gen(function* () {
    const target = yield* resolveTarget(flags)
    const cache = yield* TokenCache.memory()
    const provider = yield* ClientCredentials.make({
      clientId: target.clientId,
      clientSecret: target.clientSecret,
      authUrl: target.authUrl,
      scope: Option.getOrUndefined(flags.scope),
      tokenCache: cache
    })
    const token = Redacted.value(yield* provider.getAccessToken)
    if (!VISIBLE_ASCII.test(token)) {
      // a terminal would act on its control characters, and a pipe would get a token that is not the real one
      return yield* new AuthenticationError({
        message:
          "the Service answered with an access token that is not visible ASCII (RFC 6750 §2.1): it is neither used nor printed"
      })
    }
    const info = Option.getOrThrow(yield* cache.get)
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

export const login = (flags: Command.Command.ParseConfig<typeof loginConfig>) =>
  Effect.gen(function* () {
    const publicClient = flags.publicClient || (yield* publicClientFromEnv)
    const target = yield* resolveTarget(flags, { autoApprove: true }, { publicClient })
    const path = Option.getOrElse(flags.cache, defaultCachePath)
    yield* secureCacheDirectory(path)
    const tokenCache = yield* TokenCache.file(path)
    // PKCE always (authorizeLocal): for a public client it is the only proof, for a confidential one a second
    yield* forgetLogin(path)
    const layer = AuthorizationCode.layer({
      clientId: target.clientId,
      clientSecret: target.clientSecret,
      publicClient: target.publicClient,
      authUrl: target.authUrl,
      scope: flags.scope,
      redirectUri: `http://127.0.0.1:${flags.port}/callback`,
      tokenCache
    }).pipe(Layer.provide(http))
    const token = yield* authorizeLocal({
      openBrowser: !flags.noBrowser && target.emulator === undefined,
      onAuthorizationUrl: (url) =>
        target.emulator !== undefined && !flags.noBrowser
          ? Effect.asVoid(Effect.forkDaemon(visit(url)))
          : Console.log(`Open this URL to authorize:\n  ${url}`)
    }).pipe(Effect.provide(layer))
    yield* saveLogin(path, { clientId: target.clientId, publicClient: target.publicClient })
    yield* Console.log(
      `logged in${target.publicClient ? " as a public client (no secret)" : ""}: access token ${maskToken(Redacted.value(token.accessToken))}${
        token.scope ? ` (scope: ${oneLine(token.scope)})` : ""
      }; tokens saved to ${path}`
    )
  }).pipe(Effect.scoped)

export const whoami = (flags: Command.Command.ParseConfig<typeof whoamiConfig>) =>
  Effect.gen(function* () {
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
      return yield* new AuthenticationError({ message: `no saved login at ${path}: run \`service-sdk login\` first` })
    }
    yield* secureCacheDirectory(path)
    const tokenCache = yield* TokenCache.file(path)
    const layer = ServiceClient.layer({ apiUrl: target.apiUrl }).pipe(
      Layer.provide(
        AuthorizationCode.layer({
          clientId: target.clientId,
          clientSecret: target.clientSecret,
          publicClient: target.publicClient,
          authUrl: target.authUrl,
          tokenCache
        })
      ),
      Layer.provide(http)
    )
    const me = yield* Effect.flatMap(ServiceClient, (client) => client.users.me).pipe(Effect.provide(layer))
    // server-supplied text: one line, no control characters
    yield* Console.log(
      oneLine(
        `${me.display_name ?? me.id} (${me.id})${me.email ? ` <${me.email}>` : ""}${me.country ? `, ${me.country}` : ""}${
          me.product ? `, ${me.product}` : ""
        }`
      )
    )
  }).pipe(Effect.scoped)

export const emulator = (flags: Command.Command.ParseConfig<typeof emulatorConfig>) =>
  Effect.gen(function* () {
    const emulator = yield* Emulator.make(flags)
    yield* Console.log(
      [
        `Service emulator running (Ctrl-C to stop)`,
        `  accounts:  ${emulator.authUrl}   (token endpoint ${emulator.authUrl}/api/token)`,
        `  data API:  ${emulator.apiUrl}`,
        `  client:    ${emulator.clientId} / ${emulator.clientSecret}`,
        `  public:    ${emulator.publicClientId} (no secret: PKCE only; login --public-client)`,
        ``,
        `  export SERVICE_SDK_AUTH_URL=${emulator.authUrl} SERVICE_SDK_API_URL=${emulator.apiUrl}`,
        `  export SERVICE_SDK_CLIENT_ID=${emulator.clientId} SERVICE_SDK_CLIENT_SECRET=${emulator.clientSecret}`
      ].join("\n")
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
