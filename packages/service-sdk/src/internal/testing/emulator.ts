/**
 * The emulator as a layer of this line: `@service-sdk/emulator` (a bundle with no peer, loaded when the layer is
 * built, so a program that never asks for it needs it not) started with `Emulator.start`, its Promise handle
 * wrapped in Effects, and the SDK's configuration (`SERVICE_SDK_AUTH_URL`, `_API_URL`, `_CLIENT_ID`,
 * `_CLIENT_SECRET`) pointed at it through a `ConfigProvider` that is consulted first.
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { EmulatorHandle, EmulatorOptions } from "@service-sdk/emulator"
import { ConfigurationError } from "../../ServiceError.js"
import type { Emulator } from "../../testing.js"
import { ENV } from "../config.js"

const configurationError = (cause: unknown) =>
  new ConfigurationError({ message: cause instanceof Error ? cause.message : String(cause) })

const loadEmulator = Effect.tryPromise({
  try: () => import("@service-sdk/emulator"),
  catch: () =>
    new ConfigurationError({
      message:
        "Emulator.make and Emulator.layer need @service-sdk/emulator: npm install --save-dev @service-sdk/emulator"
    })
})

const fromHandle = (handle: EmulatorHandle): Emulator.Service => ({
  authUrl: handle.authUrl,
  apiUrl: handle.apiUrl,
  port: handle.port,
  clientId: handle.clientId,
  clientSecret: handle.clientSecret,
  publicClientId: handle.publicClientId,
  stats: Effect.promise(() => handle.stats()),
  injectFault: (fault) => Effect.tryPromise({ try: () => handle.injectFault(fault), catch: configurationError }),
  configure: (config) => Effect.tryPromise({ try: () => handle.configure(config), catch: configurationError }),
  revoke: (token) => Effect.promise(() => handle.revoke(token)),
  signIn: (options) => Effect.tryPromise({ try: () => handle.signIn(options), catch: configurationError }),
  apiRequestsByUser: Effect.promise(() => handle.apiRequestsByUser()),
  reset: Effect.promise(() => handle.reset())
})

export const make = (options: EmulatorOptions = {}): Effect.Effect<Emulator.Service, ConfigurationError, Scope.Scope> =>
  Effect.flatMap(loadEmulator, ({ Emulator }) =>
    Effect.acquireRelease(
      Effect.tryPromise({ try: () => Emulator.start(options), catch: configurationError }),
      (handle) => Effect.promise(() => handle.close())
    )
  ).pipe(Effect.map(fromHandle))

/** The SDK's environment names, pointed at `emulator` (its default confidential client). */
export const sdkEnvironment = (emulator: Emulator.Service): Map<string, string> =>
  new Map([
    [ENV.authUrl, emulator.authUrl],
    [ENV.apiUrl, emulator.apiUrl],
    [ENV.clientId, emulator.clientId],
    [ENV.clientSecret, emulator.clientSecret]
  ])

/** A `ConfigProvider` that answers the SDK's names from `emulator` first, then asks the one in place. */
export const sdkConfigLayer = (emulator: Emulator.Service): Layer.Layer<never> =>
  Layer.unwrapEffect(
    Effect.configProviderWith((current) =>
      Effect.succeed(
        Layer.setConfigProvider(
          ConfigProvider.fromMap(sdkEnvironment(emulator)).pipe(ConfigProvider.orElse(() => current))
        )
      )
    )
  )
