/**
 * The machinery behind the Promise facade: one `ManagedRuntime` per object (with the object's logger), Effects run to
 * Promises through the one bridge (`service-sdk/bridge`), and plain Promise token caches adapted to `TokenCache`.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { getOrThrow, runSyncOrThrow } from "../../bridge.js"
import { ConfigurationError, ServiceError, TokenCacheError } from "../../ServiceError.js"
import * as TokenCache from "../../TokenCache.js"
import { TokenInfo, type TokenInfoJson } from "../../TokenInfo.js"
import { describeCause, safeCause } from "@service-sdk/shared/redact"
import { layerUndiciOnFirstUse } from "./lazyHttpClient.js"
import { describeThrown, readPlainOptions } from "@service-sdk/shared/plainInput"
import { type FacadeLogger, type Logging, type LogLevelName, loggerLayer, resolveLogging } from "./logging.js"
import { effectCacheOf } from "./plainCaches.js"

export { runSyncOrThrow }

/**
 * A token cache for plain code: Promise methods. `get` resolves to `undefined` when there is no token (it may also
 * resolve to the JSON form `{ access_token, expires_at, ... }`); `clear` (optional) forgets the entry.
 *
 * @since 1.0.0
 */
export interface PromiseTokenCache {
  readonly get: () => Promise<TokenInfo | TokenInfoJson | undefined>
  readonly set: (token: TokenInfo) => Promise<void>
  readonly clear?: (() => Promise<void>) | undefined
}

/**
 * Options every facade class takes besides its own.
 *
 * @since 1.0.0
 */
export interface FacadeOptions {
  /** The `HttpClient` to use (default: `NodeHttpClient.layerUndici`, a keep-alive pool closed by `close()`). */
  readonly httpClient?: Layer.Layer<HttpClient.HttpClient> | undefined
  /**
   * The `fetch` that sends every request instead (a test's stub answering without a network, or a `fetch` with your
   * proxy): `(input, init) => Promise<Response>`. Not together with `httpClient`.
   */
  readonly fetch?: typeof globalThis.fetch | undefined
  /** The least severe level logged (default `"warning"`; `"none"` logs nothing). */
  readonly logLevel?: LogLevelName | undefined
  /** Where log lines go (default: `console.error`/`console.warn` for every level: stderr, never stdout). */
  readonly logger?: FacadeLogger | undefined
}

const isObject = (u: unknown): u is object => typeof u === "object" && u !== null

/**
 * Runs a facade constructor: whatever escapes it that is not the SDK's own error (a hostile value's getter, a
 * Proxy's trap) is a ConfigurationError naming the constructor.
 */
export const guard = <A>(name: string, make: () => A): A => {
  try {
    return make()
  } catch (error) {
    if (error instanceof ServiceError) throw error
    throw new ConfigurationError({ message: `${name}: the options cannot be used (${describeThrown(error)})` })
  }
}

/**
 * The options object of a constructor, read once (a copy: a getter or Proxy that throws, or a list too long to walk,
 * is a ConfigurationError): `undefined` is none, anything but an object is a ConfigurationError.
 */
export const checkOptions = <O extends object>(name: string, options: O | undefined | null, required = false): O => {
  if (options === undefined && !required) return {} as O
  if (!isObject(options) || Array.isArray(options)) {
    throw new ConfigurationError({ message: `${name} takes an options object (got ${describeValue(options)})` })
  }
  const read = readPlainOptions(name, options)
  if ("problem" in read) throw new ConfigurationError({ message: read.problem })
  const copy = read.options as O
  const { fetch, httpClient } = copy as FacadeOptions
  if (httpClient !== undefined && !Layer.isLayer(httpClient)) {
    throw new ConfigurationError({
      message: `httpClient must be a Layer providing HttpClient (got ${describeValue(httpClient)})`
    })
  }
  if (fetch !== undefined && typeof fetch !== "function") {
    throw new ConfigurationError({
      message: `fetch must be a function like globalThis.fetch (got ${describeValue(fetch)})`
    })
  }
  if (fetch !== undefined && httpClient !== undefined) {
    throw new ConfigurationError({ message: "pass fetch or httpClient, not both" })
  }
  return copy
}

/** A method's options from plain code, read once like a constructor's (`undefined` stays `undefined`). */
export const methodOptions = <O extends object>(name: string, options: O | undefined): O | undefined => {
  if (options === undefined || options === null || !isObject(options)) return options ?? undefined
  const read = readPlainOptions(name, options)
  if ("problem" in read) throw new ConfigurationError({ message: read.problem })
  return read.options as O
}

const describeValue = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : typeof u

const closedError = (name: string) => new ConfigurationError({ message: `${name} is closed` })

/** A runtime for one facade object; `close()` releases what its layer acquired (connection pools, servers). */
export class FacadeRuntime<R> {
  readonly #runtime: ManagedRuntime.ManagedRuntime<R, unknown>
  readonly #name: string
  /** The object's logging (a provider's, applied to its service wherever it runs). */
  readonly logging: Logging
  #closed: Promise<void> | undefined

  /** Throws ConfigurationError for a bad `logLevel`/`logger`. */
  constructor(name: string, layer: Layer.Layer<R, unknown>, options: FacadeOptions = {}) {
    this.#name = name
    this.logging = resolveLogging(options)
    this.#runtime = ManagedRuntime.make(Layer.provideMerge(layer, loggerLayer(this.logging)))
  }

  get closed(): boolean {
    return this.#closed !== undefined
  }

  /** Runs synchronously (layer construction included) and throws the SDK's error instance on failure. */
  runSync<A, E>(effect: Effect.Effect<A, E, R>): A {
    if (this.#closed !== undefined) throw closedError(this.#name)
    return getOrThrow(this.#runtime.runSyncExit(effect))
  }

  run<A, E>(effect: Effect.Effect<A, E, R>): Promise<A> {
    if (this.#closed !== undefined) return Promise.reject(closedError(this.#name))
    return this.#runtime.runPromiseExit(effect).then(getOrThrow)
  }

  close(): Promise<void> {
    this.#closed ??= this.#runtime.dispose()
    return this.#closed
  }
}

export const httpClientLayer = (options: FacadeOptions): Layer.Layer<HttpClient.HttpClient> =>
  options.httpClient ??
  (options.fetch === undefined
    ? layerUndiciOnFirstUse
    : Layer.provide(FetchHttpClient.layer, Layer.succeed(FetchHttpClient.Fetch, options.fetch)))

/** `layer` on the facade object's `HttpClient`. */
export const provideHttpClient = <A, E>(
  layer: Layer.Layer<A, E, HttpClient.HttpClient>,
  options: FacadeOptions
): Layer.Layer<A, E> => Layer.provide(layer, httpClientLayer(options))

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

const isFunction = (u: unknown): u is (...args: ReadonlyArray<never>) => unknown => typeof u === "function"

/** Whether `cache` is a token cache (an Effect `TokenCache` or a plain Promise one); else what is wrong with it. */
export const cacheProblem = (cache: unknown): string | undefined => {
  if (!isObject(cache)) return `got ${describeValue(cache)}`
  try {
    const { get, set } = cache as { get?: unknown; set?: unknown }
    if (!(Effect.isEffect(get) || isFunction(get))) return "its get is neither an Effect nor a function"
    if (!isFunction(set)) return "its set is not a function"
    return undefined
  } catch (thrown) {
    return `it could not be read: a getter or proxy threw ${describeThrown(thrown)}`
  }
}

/** The longest a call of a plain cache may take: the object's `timeout` option (default 30 s). */
export const cacheTimeout = (timeout: unknown): Duration.Duration => {
  try {
    const decoded = Duration.decodeUnknown(timeout)
    if (Option.isSome(decoded) && Duration.isFinite(decoded.value) && Duration.toMillis(decoded.value) > 0) {
      return decoded.value
    }
  } catch {}
  return Duration.seconds(30)
}

/**
 * An Effect `TokenCache` as is (also the one behind `fileTokenCache`), or a plain Promise cache adapted to one: a
 * throw or rejection is a TokenCacheError, and so is a call that has not settled within `timeout`.
 */
export const toTokenCache = (
  cache: TokenCache.TokenCache | PromiseTokenCache | undefined,
  option = "tokenCache",
  timeout: Duration.Duration = Duration.seconds(30)
): TokenCache.TokenCache | undefined => {
  if (cache === undefined) return undefined
  const problem = cacheProblem(cache)
  if (problem !== undefined) {
    throw new ConfigurationError({
      message: `${option} must be a TokenCache or { get(): Promise, set(token): Promise } (${problem})`
    })
  }
  const known = effectCacheOf(cache)
  if (known !== undefined) return known
  if (Effect.isEffect(cache.get)) return cache as TokenCache.TokenCache
  const plain = cache as PromiseTokenCache
  const clear = plain.clear
  const call = <A>(operation: string, f: () => PromiseLike<A>): Effect.Effect<A, TokenCacheError> =>
    Effect.tryPromise({ try: () => Promise.resolve(f()), catch: cacheFailure(operation) }).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () =>
          new TokenCacheError({
            message: `the token cache's ${operation} did not settle within ${Duration.toMillis(timeout)} ms (the call's timeout)`
          })
      })
    )
  const adapted: TokenCache.TokenCache = {
    get: Effect.map(
      call("get", () => plain.get()),
      asTokenInfo
    ),
    set: (token) => Effect.asVoid(call("set", () => plain.set(token)))
  }
  return isFunction(clear) ? { ...adapted, clear: Effect.asVoid(call("clear", () => clear.call(plain))) } : adapted
}
