/**
 * The machinery behind the Promise facade: one `ManagedRuntime` per object, Effects run to Promises that reject with
 * the SDK's own error instances (never a `FiberFailure`), and plain Promise token caches adapted to `TokenCache`.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { ConfigurationError, TokenCacheError } from "../../ServiceError.js"
import * as TokenCache from "../../TokenCache.js"
import { TokenInfo } from "../../TokenInfo.js"
import { describeCause, safeCause } from "../redact.js"
import { layerUndiciOnFirstUse } from "./lazyHttpClient.js"

/**
 * A token cache for plain code: Promise methods. `get` resolves to `undefined` when there is no token.
 *
 * @since 0.1.0
 */
export interface PromiseTokenCache {
  readonly get: () => Promise<TokenInfo | undefined>
  readonly set: (token: TokenInfo) => Promise<void>
}

/**
 * Options every facade class takes besides its own.
 *
 * @since 0.1.0
 */
export interface FacadeOptions {
  /** The `HttpClient` to use (default: `NodeHttpClient.layerUndici`, a keep-alive pool closed by `close()`). */
  readonly httpClient?: Layer.Layer<HttpClient.HttpClient> | undefined
}

/** The error a rejected Promise carries: the failure itself, else the defect, else an interruption error. */
export const squash = (cause: Cause.Cause<unknown>): unknown => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return Cause.originalError(failure.value)
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return Cause.originalError(defect.value)
  return Cause.squash(cause)
}

/** Runs an Effect that needs nothing, throwing the SDK's error instance on failure. */
export const runSyncOrThrow = <A, E>(effect: Effect.Effect<A, E>): A => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  throw squash(exit.cause)
}

const closedError = (name: string) => new ConfigurationError({ message: `${name} is closed` })

/** A runtime for one facade object; `close()` releases what its layer acquired (connection pools, servers). */
export class FacadeRuntime<R> {
  readonly #runtime: ManagedRuntime.ManagedRuntime<R, unknown>
  readonly #name: string
  #closed: Promise<void> | undefined

  constructor(name: string, layer: Layer.Layer<R, unknown>) {
    this.#name = name
    this.#runtime = ManagedRuntime.make(layer)
  }

  get closed(): boolean {
    return this.#closed !== undefined
  }

  /** Runs synchronously (layer construction included) and throws the SDK's error instance on failure. */
  runSync<A, E>(effect: Effect.Effect<A, E, R>): A {
    if (this.#closed !== undefined) throw closedError(this.#name)
    const exit = this.#runtime.runSyncExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw squash(exit.cause)
  }

  run<A, E>(effect: Effect.Effect<A, E, R>): Promise<A> {
    if (this.#closed !== undefined) return Promise.reject(closedError(this.#name))
    return this.#runtime.runPromiseExit(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      throw squash(exit.cause)
    })
  }

  close(): Promise<void> {
    this.#closed ??= this.#runtime.dispose()
    return this.#closed
  }
}

export const httpClientLayer = (options: FacadeOptions): Layer.Layer<HttpClient.HttpClient> =>
  options.httpClient ?? layerUndiciOnFirstUse

const isEffectCache = (cache: TokenCache.TokenCache | PromiseTokenCache): cache is TokenCache.TokenCache =>
  Effect.isEffect(cache.get)

const cacheFailure = (operation: string) => (cause: unknown) =>
  new TokenCacheError({
    message: `the token cache's ${operation} failed: ${describeCause(cause)}`,
    cause: safeCause(cause)
  })

/** A token a plain cache handed back: a `TokenInfo`, or its JSON form. */
const asTokenInfo = (value: unknown): Option.Option<TokenInfo> => {
  if (value === undefined || value === null) return Option.none()
  if (value instanceof TokenInfo) return Option.some(value)
  return TokenCache.decodeJson(JSON.stringify(value))
}

/** An Effect `TokenCache` as is, or a plain Promise cache adapted to one. */
export const toTokenCache = (
  cache: TokenCache.TokenCache | PromiseTokenCache | undefined
): TokenCache.TokenCache | undefined => {
  if (cache === undefined || isEffectCache(cache)) return cache
  return {
    get: Effect.tryPromise({ try: () => cache.get(), catch: cacheFailure("get") }).pipe(Effect.map(asTokenInfo)),
    set: (token) => Effect.tryPromise({ try: () => cache.set(token), catch: cacheFailure("set") })
  }
}
