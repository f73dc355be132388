/**
 * `UserTokens` for plain code: many users' tokens behind Promise methods, and per-user `authProvider`s for
 * `AsyncServiceClient`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { ConfigurationError } from "../../ServiceError.js"
import type * as TokenCache from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import type { TokenStore } from "../../TokenStore.js"
import * as UserTokensModule from "../../UserTokens.js"
import { describeCause } from "@service-sdk/shared/redact"
import { effectStoreOf } from "./plainCaches.js"
import { AsyncTokenProvider } from "./asyncProviders.js"
import { withLogging } from "./logging.js"
import * as Runtime from "./runtime.js"
import type { TokenSource } from "./tokenSource.js"

/**
 * One user's token cache for plain code: Promise methods; `clear` (needed by `signOut`) forgets the entry.
 *
 * @since 1.0.0
 */
export interface PromiseUserTokenCache extends Runtime.PromiseTokenCache {
  readonly clear?: (() => Promise<void>) | undefined
}

/**
 * The options of `UserTokens.layer`; `store` may also be a plain function from user id to a Promise cache.
 *
 * @since 1.0.0
 */
export interface AsyncUserTokensOptions extends Omit<UserTokensModule.Options, "store">, Runtime.FacadeOptions {
  readonly store: TokenStore | ((userId: string) => TokenCache.TokenCache | PromiseUserTokenCache)
}

const storeError = (problem: string) =>
  new ConfigurationError({
    message: `store must be a TokenStore or a function from user id to a token cache (${problem})`
  })

/** Each user's cache as an Effect `TokenCache` (a plain Promise cache adapted, `clear` included). */
const toTokenStore =
  (store: (userId: string) => TokenCache.TokenCache | PromiseUserTokenCache, timeout: Duration.Duration): TokenStore =>
  (userId) => {
    const cache = store(userId)
    const problem = Runtime.cacheProblem(cache)
    if (problem !== undefined) throw storeError(`for a user it returned a cache that is not one: ${problem}`)
    return Runtime.toTokenCache(cache, "store", timeout) as TokenCache.TokenCache
  }

/**
 * The store of the options as an Effect `TokenStore`: checked now (called once with a probe id, as a store only makes
 * a handle), built when the runtime starts (a `directoryTokenStore` first creates its directory).
 */
const resolveStore = (store: unknown, timeout: Duration.Duration): Effect.Effect<TokenStore> => {
  if (typeof store !== "function") throw storeError(`got ${store === null ? "null" : typeof store}`)
  const fromDirectory = effectStoreOf(store)
  if (fromDirectory !== undefined) return fromDirectory
  const effectStore = toTokenStore(store as (userId: string) => TokenCache.TokenCache | PromiseUserTokenCache, timeout)
  try {
    effectStore("service-sdk:store-check")
  } catch (error) {
    if (error instanceof ConfigurationError) throw error
    throw storeError(`calling it threw ${describeCause(error)}`)
  }
  return Effect.succeed(effectStore)
}

/** Only for checking options: never called. */
const unusedHttpClient = HttpClient.make(() => Effect.die("unused"))
const unusedStore: TokenStore = () => ({ get: Effect.die("unused"), set: () => Effect.die("unused") })

/**
 * One user's tokens as an `authProvider` for `new AsyncServiceClient({ authProvider })`. Made by
 * `AsyncUserTokens.forUser`; it shares the `AsyncUserTokens`' lifetime (closing that closes it; its own `close()`
 * closes nothing).
 *
 * @since 1.0.0
 */
export class AsyncUserTokenProvider extends AsyncTokenProvider<UserTokensModule.UserTokens> {}

/** Makes the provider of one user (the class's constructor is protected: `forUser` is the way to get one). */
class UserProvider extends AsyncUserTokenProvider {
  constructor(source: TokenSource<UserTokensModule.UserTokens>) {
    super(source)
  }
}

/**
 * Many users' tokens for plain code (a web app): each user's entry in `store`, renewed under that user's own
 * single flight; an unused user's in-memory state is dropped after `idleTimeToLive`.
 *
 * @example
 * ```ts
 * import { AsyncServiceClient, AsyncUserTokens, type TokenInfo } from "@service-sdk/effect/promise"
 *
 * const tokens = new Map<string, TokenInfo>() // or TokenStore.directory(...), RedisTokenStore, your database
 * const users = new AsyncUserTokens({
 *   redirectUri: "http://127.0.0.1:3000/callback",
 *   store: (userId) => ({
 *     get: async () => tokens.get(userId),
 *     set: async (token) => void tokens.set(userId, token),
 *     clear: async () => void tokens.delete(userId)
 *   })
 * })
 * const profile = async (userId: string) => {
 *   await using client = new AsyncServiceClient({ authProvider: users.forUser(userId) })
 *   return client.users.me()
 * }
 * ```
 *
 * @since 1.0.0
 */
export class AsyncUserTokens {
  readonly #runtime: Runtime.FacadeRuntime<UserTokensModule.UserTokens>
  /** The service, once the runtime has built it (asynchronously: `httpClient` may be an asynchronous layer). */
  readonly #service: Effect.Effect<UserTokensModule.UserTokensService>

  /** Throws ConfigurationError on invalid or missing options, whatever `httpClient` is. */
  constructor(options: AsyncUserTokensOptions) {
    const { runtime, service } = Runtime.guard("AsyncUserTokens", () => {
      const checked = Runtime.checkOptions("AsyncUserTokens", options, true)
      const store = resolveStore(checked.store, Runtime.cacheTimeout(checked.timeout))
      // options checked first on a stand-in client and store, so that a bad option throws even with an asynchronous
      // httpClient or store
      Runtime.runSyncOrThrow(
        Effect.scoped(UserTokensModule.make({ ...checked, store: unusedStore })).pipe(
          Effect.provideService(HttpClient.HttpClient, unusedHttpClient)
        )
      )
      const runtime = new Runtime.FacadeRuntime(
        "AsyncUserTokens",
        Runtime.provideHttpClient(
          Layer.unwrapEffect(Effect.map(store, (store) => UserTokensModule.UserTokens.layer({ ...checked, store }))),
          checked
        ),
        checked
      )
      const ready = runtime.run(UserTokensModule.UserTokens)
      ready.catch(() => undefined) // the options were checked: a failure here is the httpClient layer's, seen per call
      return { runtime, service: Effect.promise(() => ready) }
    })
    this.#runtime = runtime
    this.#service = service
  }

  /** That user's tokens, as an `authProvider` for `AsyncServiceClient`. Throws ConfigurationError on a bad id. */
  forUser(userId: string): AsyncUserTokenProvider {
    const checked = UserTokensModule.checkUserId(userId)
    const provider = Effect.map(this.#service, (service) => service.provider(checked))
    // the user's provider logs to this object's logger wherever it runs (an AsyncServiceClient's runtime included)
    const logged = withLogging(this.#runtime.logging)
    return new UserProvider({
      runtime: this.#runtime,
      service: {
        getAccessToken: logged(Effect.flatMap(provider, (p) => p.getAccessToken)),
        forceRefresh: (rejected) => logged(Effect.flatMap(provider, (p) => p.forceRefresh(rejected)))
      },
      owned: false
    })
  }

  #run<A, E>(use: (service: UserTokensModule.UserTokensService) => Effect.Effect<A, E>): Promise<A> {
    return this.#runtime.run(Effect.flatMap(UserTokensModule.UserTokens, use))
  }

  /** The user's access token ("not signed in" AuthenticationError when the user has no entry). */
  getAccessToken(userId: string): Promise<string> {
    return this.#run((service) => service.provider(userId).getAccessToken).then(Redacted.value)
  }

  /** Keeps a token for the user (e.g. from `AsyncAuthorizationCode.completeAuthorization`). */
  signIn(userId: string, token: TokenInfo): Promise<void> {
    return this.#run((service) => service.signIn(userId, token))
  }

  /** When the user's sign-in ends, or undefined when unknown or the user has no entry (since 0.2.0). */
  signInEndsAt(userId: string): Promise<Date | undefined> {
    return this.#run((service) => Effect.map(service.signInEndsAt(userId), Option.getOrUndefined))
  }

  /** Forgets the user's tokens (the store's entry and the in-memory state). */
  signOut(userId: string): Promise<void> {
    return this.#run((service) => service.signOut(userId))
  }

  /** Releases the connections and every user's state. Further calls reject with ConfigurationError. */
  close(): Promise<void> {
    return this.#runtime.close()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }
}
