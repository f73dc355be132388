/**
 * The commands of `service-sdk`: demo, token, login, whoami, emulator.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
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
import { forgetLogin, readLogin, saveLogin } from "./login.js"
import { publicClientFromEnv, publicClientOption, resolveTarget, type TargetFlags, targetOptions } from "./target.js"

const http = NodeHttpClient.layerUndici

const defaultCachePath = () =>
  join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "service-sdk", "tokens.json")

const cacheOption = Options.file("cache").pipe(
  Options.withDescription("token cache file (default ~/.config/service-sdk/tokens.json, mode 0600)"),
  Options.optional
)

const demoCommand = Command.make("demo", {}, () => demo).pipe(
  Command.withDescription("run the whole story against an embedded emulator (what `npm start` runs)")
)

const tokenCommand = Command.make(
  "token",
  {
    ...targetOptions,
    json: Options.boolean("json").pipe(Options.withDescription("print JSON")),
    reveal: Options.boolean("reveal").pipe(Options.withDescription("print the raw token (for piping)")),
    scope: Options.text("scope").pipe(Options.withDescription("space- or comma-separated scopes"), Options.optional)
  },
  (flags) =>
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
          `access token ${shown}, expires in ${expiresIn} s${info.scope ? `, scope: ${info.scope}` : ""}`
        )
      }
    }).pipe(Effect.scoped, Effect.provide(http))
).pipe(Command.withDescription("get an app token (client credentials) and print it masked"))

const loginCommand = Command.make(
  "login",
  {
    ...targetOptions,
    scope: Options.text("scope").pipe(
      Options.withDescription("space- or comma-separated scopes"),
      Options.withDefault("user-read-private user-read-email user-library-read")
    ),
    noBrowser: Options.boolean("no-browser").pipe(
      Options.withDescription("print the URL instead of opening a browser")
    ),
    port: Options.integer("port").pipe(
      Options.withDescription("loopback port for the redirect"),
      Options.withDefault(8888)
    ),
    publicClient: publicClientOption,
    cache: cacheOption
  },
  (flags) =>
    Effect.gen(function* () {
      const publicClient = flags.publicClient || (yield* publicClientFromEnv)
      const target = yield* resolveTarget(flags, { autoApprove: true }, { publicClient })
      const path = Option.getOrElse(flags.cache, defaultCachePath)
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
          token.scope ? ` (scope: ${token.scope})` : ""
        }; tokens saved to ${path}`
      )
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("sign in through the browser (authorization code) and save the tokens"))

const whoamiCommand = Command.make(
  "whoami",
  { ...targetOptions, publicClient: publicClientOption, cache: cacheOption },
  (flags) =>
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
      yield* Console.log(
        `${me.display_name ?? me.id} (${me.id})${me.email ? ` <${me.email}>` : ""}${me.country ? `, ${me.country}` : ""}${
          me.product ? `, ${me.product}` : ""
        }`
      )
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("show the signed-in user, refreshing the saved token as needed"))

const emulatorCommand = Command.make(
  "emulator",
  {
    port: Options.integer("port").pipe(
      Options.withDescription("port on 127.0.0.1 (0: any free one)"),
      Options.withDefault(4000)
    ),
    autoApprove: Options.boolean("auto-approve").pipe(Options.withDescription("approve consent without a page")),
    tokenLifetime: Options.integer("token-lifetime").pipe(
      Options.withDescription("access token lifetime in seconds"),
      Options.withDefault(3600)
    ),
    rotateRefreshTokens: Options.boolean("rotate-refresh-tokens").pipe(
      Options.withDescription("issue a new refresh token on every refresh")
    )
  },
  (flags) =>
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
).pipe(Command.withDescription("run the Service emulator standalone"))

export const rootCommand = Command.make("service-sdk", {}, () =>
  Console.log("service-sdk: try `service-sdk demo`, or `service-sdk --help`")
).pipe(
  Command.withDescription("Call the Service without handling OAuth tokens by hand"),
  Command.withSubcommands([demoCommand, tokenCommand, loginCommand, whoamiCommand, emulatorCommand])
)

export type { TargetFlags }
