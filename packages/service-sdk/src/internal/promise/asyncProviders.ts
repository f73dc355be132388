/**
 * The providers for plain code: Promise methods over the same Effect providers.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as AuthorizationCodeModule from "../../AuthorizationCode.js"
import * as ClientCredentials from "../../ClientCredentials.js"
import { runSyncOrThrow } from "../../bridge.js"
import type { ConfigurationError } from "../../ServiceError.js"
import type * as TokenCache from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { TokenProvider, type TokenProviderService } from "../../TokenProvider.js"
import { type AsyncAuthorizeLocalOptions, toEffectOptions } from "./authorizeLocalOptions.js"
import { withLogging } from "./logging.js"
import * as Runtime from "./runtime.js"
import { register, type TokenSource } from "./tokenSource.js"

/**
 * The options of the Effect providers, with a plain Promise cache allowed too.
 *
 * @since 1.0.0
 */
export type AsyncOptions<O extends { readonly tokenCache?: unknown }> = Omit<O, "tokenCache"> &
  Runtime.FacadeOptions & {
    readonly tokenCache?: TokenCache.TokenCache | Runtime.PromiseTokenCache | undefined
  }

const loadAuthorizeLocal = Effect.promise(() => import("../../authorizeLocal.js"))

/** The synchronous read of the cached token of the provider a facade object owns. */
class Peek extends Context.Tag("service-sdk/promise/Peek")<Peek, () => Redacted.Redacted<string> | undefined>() {}

/** A provider and its `peek`, as the context of a facade runtime. */
const ownedLayer = <S extends TokenProviderService, I = never>(
  made: Effect.Effect<
    { readonly service: S; readonly peek: () => Redacted.Redacted<string> | undefined },
    ConfigurationError,
    HttpClient.HttpClient | Scope.Scope
  >,
  options: Runtime.FacadeOptions,
  tag?: Context.Tag<I, S>
): Layer.Layer<TokenProvider | Peek | I, ConfigurationError> =>
  Runtime.provideHttpClient(
    Layer.scopedContext(
      Effect.map(made, ({ peek, service }) => {
        const context = Context.make(TokenProvider, service).pipe(Context.add(Peek, peek))
        return tag === undefined
          ? (context as Context.Context<TokenProvider | Peek | I>)
          : Context.add(context, tag, service)
      })
    ),
    options
  )

/** A new runtime for a provider the facade object owns, and the provider service built in it (synchronously). */
const ownedSource = <R>(
  name: string,
  layer: Layer.Layer<R | TokenProvider | Peek, ConfigurationError>,
  options: Runtime.FacadeOptions
): TokenSource<R | TokenProvider | Peek> => {
  const runtime = new Runtime.FacadeRuntime(name, layer, options)
  const { peek, service } = runtime.runSync(Effect.all({ service: TokenProvider, peek: Peek }))
  // the provider logs to its own logger wherever it runs (an AsyncServiceClient's runtime included)
  const logged = withLogging(runtime.logging)
  return {
    runtime,
    service: {
      getAccessToken: logged(service.getAccessToken),
      forceRefresh: (rejected) => logged(service.forceRefresh(rejected))
    },
    peek,
    owned: true
  }
}

/**
 * What every Promise provider shares: the cached-token fast path (a still-valid cached token is served without
 * running an Effect) and the lifetime. Concurrent callers on a stale token share one pending Promise.
 *
 * @since 1.0.0
 */
export abstract class AsyncTokenProvider<R = TokenProvider> {
  readonly #source: TokenSource<R | TokenProvider> | TokenSource<R>
  /** The `getAccessToken` run under way, if any: held only while it is pending, never its value. */
  #pending: Promise<string> | undefined
  /** The settled Promise of the cached token last served (the same `Redacted` instance: the same token). */
  #served: { readonly token: Redacted.Redacted<string>; readonly promise: Promise<string> } | undefined

  protected constructor(source: TokenSource<R | TokenProvider> | TokenSource<R>) {
    this.#source = source
    register(this, source)
  }

  /**
   * A valid access token. A still-valid cached token is served without running an Effect; callers on a stale one
   * share the Promise of one run of the provider's `getAccessToken` (whose single flight decides the renewal):
   * a fiber per plain caller costs more than the renewal itself in a herd.
   */
  getAccessToken(): Promise<string> {
    const { peek, runtime, service } = this.#source
    if (this.#pending !== undefined && !runtime.closed) return this.#pending
    // one settled Promise per token, handed to every caller until the token changes
    const cached = peek?.()
    if (cached !== undefined && !runtime.closed) {
      if (this.#served?.token !== cached)
        this.#served = { token: cached, promise: Promise.resolve(Redacted.value(cached)) }
      return this.#served.promise
    }
    const pending = runtime.run(service.getAccessToken).then(Redacted.value)
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
 * @since 1.0.0
 */
export class AsyncClientCredentials extends AsyncTokenProvider<TokenProvider> {
  /** Throws ConfigurationError on invalid or missing options. */
  constructor(options: AsyncOptions<ClientCredentials.Options> = {}) {
    super(
      Runtime.guard("AsyncClientCredentials", () => {
        const checked = Runtime.checkOptions("AsyncClientCredentials", options)
        const tokenCache = Runtime.toTokenCache(checked.tokenCache, "tokenCache", Runtime.cacheTimeout(checked.timeout))
        return ownedSource(
          "AsyncClientCredentials",
          ownedLayer(ClientCredentials.makeOwned({ ...checked, tokenCache }), checked),
          checked
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
 * @since 1.0.0
 */
export class AsyncAuthorizationCode extends AsyncTokenProvider<AuthorizationCodeModule.AuthorizationCode> {
  readonly #runtime: Runtime.FacadeRuntime<AuthorizationCodeModule.AuthorizationCode | TokenProvider | Peek>
  readonly #authorizationCode: AuthorizationCodeModule.AuthorizationCodeService

  /** Throws ConfigurationError on invalid or missing options. */
  constructor(options: AsyncOptions<AuthorizationCodeModule.Options> = {}) {
    const { authorizationCode, source } = Runtime.guard("AsyncAuthorizationCode", () => {
      const checked = Runtime.checkOptions("AsyncAuthorizationCode", options)
      const tokenCache = Runtime.toTokenCache(checked.tokenCache, "tokenCache", Runtime.cacheTimeout(checked.timeout))
      const source = ownedSource(
        "AsyncAuthorizationCode",
        ownedLayer(
          AuthorizationCodeModule.makeOwned({ ...checked, tokenCache }),
          checked,
          AuthorizationCodeModule.AuthorizationCode
        ),
        checked
      )
      return { source, authorizationCode: source.runtime.runSync(AuthorizationCodeModule.AuthorizationCode) }
    })
    super(source)
    this.#runtime = source.runtime
    this.#authorizationCode = authorizationCode
  }

  /**
   * The code from the URL the authorization server redirected to; throws AuthenticationError (see
   * `AuthorizationCode.parseResponseUrl`).
   */
  static parseResponseUrl(
    url: string,
    options: { readonly expectedState?: string | undefined; readonly issuer?: string | undefined } = {}
  ): string {
    return runSyncOrThrow(
      AuthorizationCodeModule.parseResponseUrl(
        url,
        Runtime.methodOptions("AsyncAuthorizationCode.parseResponseUrl", options) ?? {}
      )
    )
  }

  /** The URL to send the user to. */
  getAuthorizationUrl(options?: AuthorizationCodeModule.AuthorizationUrlOptions): string {
    return Runtime.guard("getAuthorizationUrl", () =>
      this.#authorizationCode.getAuthorizationUrl(Runtime.methodOptions("getAuthorizationUrl", options))
    )
  }

  /** Exchanges the code from the redirect for tokens, and caches them (public clients pass the PKCE verifier). */
  exchangeCode(code: string, options?: AuthorizationCodeModule.ExchangeCodeOptions): Promise<TokenInfo> {
    return this.#runtime.run(
      Effect.suspend(() => this.#authorizationCode.exchangeCode(code, Runtime.methodOptions("exchangeCode", options)))
    )
  }

  /** Whether this is a public client (no secret). */
  get publicClient(): boolean {
    return this.#authorizationCode.publicClient
  }

  /**
   * When the user's sign-in ends (the refresh token's end), or undefined when nothing says (since 0.2.0).
   */
  signInEndsAt(): Promise<Date | undefined> {
    return this.#runtime.run(Effect.map(this.#authorizationCode.signInEndsAt, Option.getOrUndefined))
  }

  /**
   * Starts a sign-in: a fresh state (unless given) and PKCE pair, and the URL to send the user to. Keep `state` and
   * `codeVerifier` server-side until the callback.
   */
  beginAuthorization(
    options?: AuthorizationCodeModule.BeginAuthorizationOptions
  ): Promise<AuthorizationCodeModule.PendingAuthorization> {
    return this.#runtime.run(
      Effect.suspend(() =>
        this.#authorizationCode.beginAuthorization(Runtime.methodOptions("beginAuthorization", options))
      )
    )
  }

  /** Finishes a sign-in: checks the callback's state, exchanges its code with the verifier, caches the tokens. */
  completeAuthorization(
    callbackUrl: string,
    pending: { readonly state: string; readonly codeVerifier: string | Redacted.Redacted<string> }
  ): Promise<TokenInfo> {
    return this.#runtime.run(this.#authorizationCode.completeAuthorization(callbackUrl, pending))
  }

  /**
   * Runs the authorization code flow on a loopback server (`authorizeLocal`) and resolves to the tokens, also cached.
   */
  authorizeLocal(options?: AsyncAuthorizeLocalOptions): Promise<TokenInfo> {
    // loaded on use: the loopback server and the browser opener (node:http, node:child_process) cost every import
    return this.#runtime.run(
      Effect.flatMap(loadAuthorizeLocal, ({ authorizeLocal }) =>
        Effect.provideService(
          Effect.suspend(() => authorizeLocal(toEffectOptions(Runtime.methodOptions("authorizeLocal", options)))),
          AuthorizationCodeModule.AuthorizationCode,
          this.#authorizationCode
        )
      )
    )
  }
}
