/**
 * The providers for plain code: Promise methods over the same Effect providers.
 */
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as AuthorizationCodeModule from "../../AuthorizationCode.js"
import * as ClientCredentials from "../../ClientCredentials.js"
import type * as OAuthClient from "../../OAuthClient.js"
import type { ConfigurationError } from "../../ServiceError.js"
import type * as TokenCache from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import type { Service as TokenProviderService } from "../../TokenProvider.js"
import { callSite, getOrThrow } from "./bridge.js"
import { type AsyncAuthorizeLocalOptions, withPlainCallback } from "./authorizeLocalOptions.js"
import * as Runtime from "./runtime.js"
import { register, type TokenSource } from "./tokenSource.js"

/**
 * The options of the Effect providers, with a plain Promise cache allowed too.
 *
 * @since 2.0.0
 */
export type AsyncOptions<O extends { readonly tokenCache?: unknown }> = Omit<O, "tokenCache"> &
  Runtime.FacadeOptions & {
    readonly tokenCache?: TokenCache.TokenCache | Runtime.PromiseTokenCache | undefined
  }

const loadAuthorizeLocal = Effect.promise(() => import("../../authorizeLocal.js"))

/**
 * The client credentials options of the facade: those of `ClientCredentials` (a sign-in's lifetime means nothing
 * to app tokens; the Effect 3 line's facade has no such option either).
 *
 * @since 2.0.0
 */
export type ClientCredentialsOptions = Omit<ClientCredentials.Options, "refreshTokenLifetime">

/**
 * A new runtime for a provider the facade object owns, and the provider service built in it (synchronously). The
 * service runs in the object's surroundings (its logger, its `fetch`) wherever it runs.
 */
const ownedSource = <S extends TokenProviderService>(
  name: string,
  options: Runtime.FacadeOptions & { readonly timeout?: unknown; readonly tokenCache?: unknown },
  make: (
    tokenCache: TokenCache.TokenCache | undefined
  ) => Effect.Effect<
    { readonly service: S; readonly peek: () => Redacted.Redacted<string> | undefined },
    ConfigurationError,
    HttpClient.HttpClient | Scope.Scope
  >
): TokenSource<HttpClient.HttpClient> & { readonly built: S } => {
  const surroundings = Runtime.surroundings(options)
  const tokenCache = Runtime.toTokenCache(
    options.tokenCache as TokenCache.TokenCache | Runtime.PromiseTokenCache | undefined,
    "tokenCache",
    Runtime.cacheTimeout(options.timeout)
  )
  const runtime = new Runtime.FacadeRuntime(name, Runtime.httpClientLayer(options), surroundings)
  const { peek, service: built } = runtime.runSync(Scope.provide(make(tokenCache), runtime.scope))
  const { around } = surroundings
  const shared: TokenProviderService = {
    getAccessToken: around(built.getAccessToken),
    forceRefresh: (rejected) => around(built.forceRefresh(rejected))
  }
  return { runtime, service: built, shared, owned: true, built, peek }
}

/**
 * What every Promise provider shares: a still-valid cached token settles at once (its Effect completes without
 * waiting), concurrent callers on a stale token share one pending Promise, and the lifetime.
 *
 * @since 2.0.0
 */
export abstract class AsyncTokenProvider {
  readonly #source: TokenSource<any>
  /** The `getAccessToken` run under way, if any: held only while it is pending, never its value. */
  #pending: Promise<string> | undefined
  /** The settled Promise of the cached token last served (the same `Redacted` instance: the same token). */
  #served: { readonly token: Redacted.Redacted<string>; readonly promise: Promise<string> } | undefined

  protected constructor(source: TokenSource<any>) {
    this.#source = source
    register(this, source)
  }

  /**
   * A valid access token. Callers on a stale one share the Promise of one run of the provider's `getAccessToken`
   * (whose single flight decides the renewal).
   */
  getAccessToken(): Promise<string> {
    const { peek, runtime, service } = this.#source
    if (this.#pending !== undefined && !runtime.closed) return this.#pending
    // a still-valid cached token: no fiber (a renewal ahead that is due, a closed runtime: the Effect path), and
    // one settled Promise per token, handed to every caller until the token changes
    const cached = peek?.()
    if (cached !== undefined && !runtime.closed) {
      if (this.#served?.token !== cached)
        this.#served = { token: cached, promise: Promise.resolve(Redacted.value(cached)) }
      return this.#served.promise
    }
    const started = runtime.start(service.getAccessToken)
    if (!(started instanceof Promise)) {
      // settled at once (a cached token, or a failure known without waiting): nothing to share
      try {
        return Promise.resolve(Redacted.value(started.value))
      } catch (error) {
        return Promise.reject(error)
      }
    }
    const pending = started.then(Redacted.value)
    this.#pending = pending
    const settled = () => {
      if (this.#pending === pending) this.#pending = undefined
    }
    pending.then(settled, settled)
    return pending
  }

  /** After the API rejected `rejected` with 401: a fresh token (see `TokenProvider.forceRefresh`). */
  forceRefresh(rejected: string): Promise<string> {
    return this.#source.runtime.run(this.#source.service.forceRefresh(Redacted.make(rejected))).then(Redacted.value)
  }

  /** Releases the provider's connections (a per-user provider shares its `AsyncUserTokens`' and closes nothing). */
  close(): Promise<void> {
    return this.#source.owned ? this.#source.runtime.close() : Promise.resolve()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }
}

/**
 * Client credentials for plain code: app-only tokens, cached and renewed (one request however many callers wait).
 * Credentials fall back to `SERVICE_SDK_CLIENT_ID` / `SERVICE_SDK_CLIENT_SECRET`.
 *
 * @example
 * ```ts
 * import { AsyncClientCredentials, AsyncServiceClient } from "@service-sdk/effect/promise"
 *
 * await using auth = new AsyncClientCredentials({ clientId: "my-app", clientSecret: process.env.MY_APP_SECRET })
 * const token: string = await auth.getAccessToken()
 * await using client = new AsyncServiceClient({ authProvider: auth })
 * ```
 *
 * @since 2.0.0
 */
export class AsyncClientCredentials extends AsyncTokenProvider {
  /** Throws ConfigurationError on invalid or missing options. */
  constructor(options: AsyncOptions<ClientCredentialsOptions> = {}) {
    super(
      Runtime.guard("AsyncClientCredentials", () => {
        const checked = Runtime.checkOptions("AsyncClientCredentials", options)
        return ownedSource("AsyncClientCredentials", checked, (tokenCache) =>
          ClientCredentials.makeOwned({ ...checked, tokenCache })
        )
      })
    )
  }
}

/**
 * The authorization code grant for plain code: sign-in (`authorizeLocal`, or `beginAuthorization` then
 * `completeAuthorization`), then user tokens renewed with the refresh token.
 *
 * @example
 * ```ts
 * import { AsyncAuthorizationCode } from "@service-sdk/effect/promise"
 *
 * await using auth = new AsyncAuthorizationCode({ redirectUri: "http://127.0.0.1:8080/callback" })
 * await auth.authorizeLocal({ scope: ["user-read-private"] }) // opens the browser, waits for the redirect
 * const token: string = await auth.getAccessToken()
 * ```
 *
 * @since 2.0.0
 */
export class AsyncAuthorizationCode extends AsyncTokenProvider {
  readonly #runtime: Runtime.FacadeRuntime<HttpClient.HttpClient>
  readonly #authorizationCode: AuthorizationCodeModule.Service
  readonly #publicClient: boolean

  /** Throws ConfigurationError on invalid or missing options. */
  constructor(options: AsyncOptions<AuthorizationCodeModule.Options> = {}) {
    const { checked, source } = Runtime.guard("AsyncAuthorizationCode", () => {
      const checked = Runtime.checkOptions("AsyncAuthorizationCode", options)
      const source = ownedSource("AsyncAuthorizationCode", checked, (tokenCache) =>
        AuthorizationCodeModule.makeOwned({ ...checked, tokenCache })
      )
      return { checked, source }
    })
    super(source)
    this.#runtime = source.runtime
    this.#authorizationCode = source.built
    this.#publicClient = checked.publicClient === true
  }

  /**
   * The code from the URL the authorization server redirected to; throws AuthenticationError (see
   * `AuthorizationCode.parseResponseUrl`).
   */
  static parseResponseUrl(
    url: string,
    options: { readonly expectedState?: string | undefined; readonly issuer?: string | undefined } = {}
  ): string {
    const exit = Effect.runSyncExit(
      AuthorizationCodeModule.parseResponseUrl(
        url,
        Runtime.methodOptions("AsyncAuthorizationCode.parseResponseUrl", options)
      )
    )
    return getOrThrow(exit, callSite(AsyncAuthorizationCode.parseResponseUrl))
  }

  /** The URL to send the user to. */
  getAuthorizationUrl(options?: OAuthClient.AuthorizationUrlOptions): string {
    return Runtime.guard("getAuthorizationUrl", () =>
      this.#authorizationCode.getAuthorizationUrl(Runtime.methodOptions("getAuthorizationUrl", options))
    )
  }

  /** Exchanges the code from the redirect for tokens, and caches them (public clients pass the PKCE verifier). */
  exchangeCode(
    code: string,
    options?: { readonly codeVerifier?: string | Redacted.Redacted<string> | undefined }
  ): Promise<TokenInfo> {
    return this.#runtime.run(
      Effect.suspend(() => this.#authorizationCode.exchangeCode(code, Runtime.methodOptions("exchangeCode", options)))
    )
  }

  /** Whether this is a public client (no secret). */
  get publicClient(): boolean {
    return this.#publicClient
  }

  /**
   * When the user's sign-in ends (the refresh token's end), or undefined when nothing says.
   */
  signInEndsAt(): Promise<Date | undefined> {
    return this.#runtime.run(Effect.map(this.#authorizationCode.signInEndsAt, Option.getOrUndefined))
  }

  /**
   * Starts a sign-in: a fresh state (unless given) and PKCE pair, and the URL to send the user to. Keep `state` and
   * `codeVerifier` server-side until the callback.
   */
  beginAuthorization(options?: OAuthClient.BeginAuthorizationOptions): Promise<OAuthClient.PendingAuthorization> {
    return this.#runtime.run(
      Effect.suspend(() =>
        this.#authorizationCode.beginAuthorization(Runtime.methodOptions("beginAuthorization", options))
      )
    )
  }

  /** Finishes a sign-in: checks the callback's state, exchanges its code with the verifier, caches the tokens. */
  completeAuthorization(callbackUrl: string, pending: OAuthClient.PendingInput): Promise<TokenInfo> {
    return this.#runtime.run(
      Effect.suspend(() =>
        this.#authorizationCode.completeAuthorization(
          callbackUrl,
          Runtime.methodOptions("completeAuthorization", pending) as OAuthClient.PendingInput
        )
      )
    )
  }

  /**
   * Runs the authorization code flow on a loopback server (`authorizeLocal`) and resolves to the tokens, also cached.
   */
  authorizeLocal(options?: AsyncAuthorizeLocalOptions): Promise<TokenInfo> {
    // loaded on use: the loopback server and the browser opener (node:http, node:child_process) cost every import
    return this.#runtime.run(
      Effect.flatMap(loadAuthorizeLocal, ({ authorizeLocal }) =>
        Effect.provideService(
          Effect.suspend(() => withPlainCallback(Runtime.methodOptions("authorizeLocal", options), authorizeLocal)),
          AuthorizationCodeModule.AuthorizationCode,
          this.#authorizationCode
        )
      )
    )
  }
}
