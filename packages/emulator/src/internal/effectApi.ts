/**
 * The emulator as an Effect 3 service, for this workspace's own Effect code (the bin, the tests): the published
 * package's API is the plain one (`../Emulator.ts`); Effect programs get the emulator from their line's
 * `@service-sdk/effect/testing`.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type {
  EmulatorConfig,
  EmulatorHandle,
  EmulatorOptions,
  Fault,
  SignInOptions,
  SignInTokens,
  Stats
} from "../Emulator.js"
import type { EmulatorError } from "../EmulatorError.js"
import * as internal from "./emulator.js"

export { EmulatorError } from "../EmulatorError.js"
export type {
  ClientRegistration,
  EmulatorConfig,
  EmulatorHandle,
  EmulatorOptions,
  Fault,
  PlaybackState,
  SignInOptions,
  SignInTokens,
  Stats
} from "../Emulator.js"

/**
 * The default client id.
 *
 * @since 1.0.0
 * @category constants
 */
export const defaultClientId: string = internal.defaultClientId

/**
 * The default client secret.
 *
 * @since 1.0.0
 * @category constants
 */
export const defaultClientSecret: string = internal.defaultClientSecret

/**
 * The id of the public client registered by default (no secret; it must use PKCE).
 *
 * @since 1.0.0
 * @category constants
 */
export const defaultPublicClientId: string = internal.defaultPublicClientId

/**
 * The `trackId` of the local file in the fixtures (a file on the user's device: the Service sends it with `null`
 * track, album and artist ids). It is third in `emulator-user`'s library; `playback: { trackId: localFileTrackId }`
 * plays it.
 *
 * @since 1.0.0
 * @category constants
 */
export const localFileTrackId: string = internal.localFileTrackId

/**
 * Starts an emulator in the current scope; closing the scope stops it.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make: (options?: EmulatorOptions) => Effect.Effect<Emulator.Service, EmulatorError, Scope.Scope> =
  internal.make

/**
 * A layer that starts an emulator and stops it when the layer's scope closes.
 *
 * @since 1.0.0
 * @category layers
 */
export const layer = (options?: EmulatorOptions): Layer.Layer<Emulator, EmulatorError> =>
  Layer.scoped(Emulator, make(options))

/**
 * Starts an emulator for plain code. Call `close()` (or use `await using`) to stop it.
 *
 * @since 1.0.0
 * @category constructors
 */
export const start: (options?: EmulatorOptions) => Promise<EmulatorHandle> = internal.start

/**
 * The running emulator.
 *
 * @since 1.0.0
 * @category tags
 */
export class Emulator extends Context.Tag("service-sdk/Emulator")<Emulator, Emulator.Service>() {
  /**
   * Starts the emulator on a loopback port for the current scope (it stops when the scope closes).
   *
   * @example
   * ```ts
   * import { Emulator } from "@service-sdk/emulator"
   * import { Effect } from "effect"
   *
   * const stats = Effect.gen(function* () {
   *   const emulator = yield* Emulator.make({ tokenLifetime: 60 })
   *   yield* emulator.injectFault({ target: "token", count: 1, status: 503 })
   *   return yield* emulator.stats
   * }).pipe(Effect.scoped)
   * ```
   *
   * @since 1.0.0
   */
  static readonly make = make
  /**
   * {@link Emulator.make} as a `Layer` of `Emulator`; the server stops when the layer is released.
   *
   * @since 1.0.0
   */
  static readonly layer = layer
  /**
   * Starts the emulator for plain (Promise) code; stop it with `close()` or `await using`.
   *
   * @example
   * ```ts
   * import { Emulator } from "@service-sdk/emulator"
   *
   * await using emulator = await Emulator.start({ autoApprove: true })
   * const response = await fetch(`${emulator.authUrl}/api/token`, {
   *   method: "POST",
   *   headers: { authorization: `Basic ${btoa(`${emulator.clientId}:${emulator.clientSecret}`)}` },
   *   body: new URLSearchParams({ grant_type: "client_credentials" })
   * })
   * console.log(response.status, await emulator.stats())
   * ```
   *
   * @since 1.0.0
   */
  static readonly start = start
  /**
   * The default confidential client's id, `emulator-client`.
   *
   * @since 1.0.0
   */
  static readonly defaultClientId = defaultClientId
  /**
   * The default confidential client's secret, `emulator-secret`.
   *
   * @since 1.0.0
   */
  static readonly defaultClientSecret = defaultClientSecret
  /**
   * The public client's id, `emulator-public-client` (no secret; PKCE required).
   *
   * @since 1.0.0
   */
  static readonly defaultPublicClientId = defaultPublicClientId
  /**
   * The `trackId` of the local file in the fixtures (`null` ids, `is_local: true`).
   *
   * @since 1.0.0
   */
  static readonly localFileTrackId = localFileTrackId
}

/**
 * @since 1.0.0
 */
export declare namespace Emulator {
  /**
   * @since 1.0.0
   * @category models
   */
  export interface Service {
    /** `http://127.0.0.1:<port>` */
    readonly authUrl: string
    /** `http://127.0.0.1:<port>/v1` */
    readonly apiUrl: string
    readonly port: number
    /** the default client's id, `emulator-client` */
    readonly clientId: string
    /** the default client's secret, `emulator-secret` */
    readonly clientSecret: string
    /** the public client's id, `emulator-public-client` (no secret; PKCE required) */
    readonly publicClientId: string
    readonly stats: Effect.Effect<Stats>
    readonly injectFault: (fault: Fault) => Effect.Effect<void, EmulatorError>
    readonly configure: (config: EmulatorConfig) => Effect.Effect<void, EmulatorError>
    /** revokes an access or refresh token; succeeds with whether it was known */
    readonly revoke: (token: string) => Effect.Effect<boolean>
    /**
     * Signs a user in as if they had approved the consent page and the code had been exchanged: a new grant with an
     * access token and a refresh token for the default client. Not counted in `stats` (no request was made).
     *
     * @since 1.0.0
     */
    readonly signIn: (options: SignInOptions) => Effect.Effect<SignInTokens, EmulatorError>
    /**
     * Data API requests made with a valid user token, by that token's user id, since start or the last reset.
     *
     * @since 1.0.0
     */
    readonly apiRequestsByUser: Effect.Effect<Readonly<Record<string, number>>>
    /** back to the start options: clears tokens, codes, faults, stats and library changes */
    readonly reset: Effect.Effect<void>
  }
  /**
   * @since 1.0.0
   * @category models
   */
  export type Options = EmulatorOptions
}
