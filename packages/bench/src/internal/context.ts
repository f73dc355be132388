/**
 * What every part gets: the mode and its sizes, the emulator (in its worker), and one shared undici pool for every
 * SDK provider and client, so that no measurement pays for a new connection pool.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { ClientCredentials, type TokenProviderService } from "@service-sdk/effect"
import { AsyncClientCredentials } from "@service-sdk/effect/promise"
import type { WorkerEmulator } from "./emulator.js"
import type { Settings } from "./harness.js"

export interface Sizes {
  /** herd sizes (concurrent callers) */
  readonly herd: ReadonlyArray<number>
  /** herd rounds per size */
  readonly herdRounds: number
  /** herd size for the peers */
  readonly peerHerd: number
  readonly peerHerdRounds: number
  /** cached calls (Effect API, then facade) and client requests before the memory is read */
  readonly memoryCalls: number
  readonly memoryRequests: number
  /** cold processes per start-up row */
  readonly startupRuns: number
  /** cold processes per side in part 12's import rows (their per-pair ratios spread ±15%: more than part 7's) */
  readonly coldImportRuns: number
  /** bounded wait for a quiet machine before each part (ms) */
  readonly quietWaitMs: number
}

export interface Context {
  readonly quick: boolean
  readonly settings: Settings
  readonly sizes: Sizes
  readonly emulator: WorkerEmulator
  readonly http: HttpClient.HttpClient
  /** progress lines (not part of the table) */
  readonly log: (line: string) => void
}

/** The client credentials of the emulator's default client, at the emulator. */
export const credentials = (context: Context) => ({
  clientId: context.emulator.clientId,
  clientSecret: context.emulator.clientSecret,
  authUrl: context.emulator.authUrl
})

/** A new Effect client credentials provider (empty cache) on the shared pool. */
export const makeProvider = (context: Context): Promise<TokenProviderService> =>
  Effect.runPromise(
    ClientCredentials.make(credentials(context)).pipe(
      // the provider's background work lives as long as the bench process
      Effect.provideServiceEffect(Scope.Scope, Scope.make()),
      Effect.provideService(HttpClient.HttpClient, context.http)
    )
  )

/** A new Promise facade provider (empty cache) on the shared pool. */
export const makeAsyncProvider = (context: Context): AsyncClientCredentials =>
  new AsyncClientCredentials({
    ...credentials(context),
    httpClient: Layer.succeed(HttpClient.HttpClient, context.http)
  })

/** `effect` run `n` times in sequence, in one Effect. */
export const repeat = <A, E>(effect: Effect.Effect<A, E>, n: number): Effect.Effect<void, E> => {
  const loop = (left: number): Effect.Effect<void, E> =>
    left === 0 ? Effect.void : Effect.flatMap(effect, () => loop(left - 1))
  return Effect.suspend(() => loop(n))
}

/** `call` awaited `n` times in sequence. */
export const repeatAsync = async (call: () => Promise<unknown>, n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await call()
}
