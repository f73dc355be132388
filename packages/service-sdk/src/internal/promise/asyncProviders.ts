/**
 * The providers for plain code: Promise methods over the same Effect providers.
 */
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as AuthorizationCodeModule from "../../AuthorizationCode.js"
import * as ClientCredentials from "../../ClientCredentials.js"
import type { ConfigurationError } from "../../ServiceError.js"
import type * as TokenCache from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { TokenProvider, type TokenProviderService } from "../../TokenProvider.js"
import * as Provider from "../provider.js"
import { type AsyncAuthorizeLocalOptions, asyncAuthorizeLocal } from "./asyncAuthorizeLocal.js"
import * as Runtime from "./runtime.js"

/**
 * The options of the Effect providers, with a plain Promise cache allowed too.
 *
 * @since 0.1.0
 */
export type AsyncOptions<O extends { readonly tokenCache?: unknown }> = Omit<O, "tokenCache"> &
  Runtime.FacadeOptions & {
    readonly tokenCache?: TokenCache.TokenCache | Runtime.PromiseTokenCache | undefined
  }

/** What every Promise provider shares: the runtime, the service, and the cached-token fast path. */
export abstract class AsyncTokenProvider<R = TokenProvider> {
  /** @internal */
  readonly runtime: Runtime.FacadeRuntime<R | TokenProvider>
  /** @internal */
  readonly service: TokenProviderService
  #inflight: Promise<string> | undefined

  protected constructor(name: string, layer: Layer.Layer<R | TokenProvider, ConfigurationError>) {
    this.runtime = new Runtime.FacadeRuntime(name, layer)
    this.service = this.runtime.runSync(TokenProvider)
  }

  /**
   * A valid access token. A still-valid cached token is served without running an Effect; concurrent callers on a
   * stale one share one Promise (and the provider's single flight makes one token request).
   */
  getAccessToken(): Promise<string> {
    const cached = Provider.peek(this.service)
    if (cached !== undefined && !this.runtime.closed) return Promise.resolve(Redacted.value(cached))
    if (this.#inflight !== undefined) return this.#inflight
    const inflight = this.runtime.run(this.service.getAccessToken).then(Redacted.value)
    this.#inflight = inflight
    const clear = () => {
      if (this.#inflight === inflight) this.#inflight = undefined
    }
    inflight.then(clear, clear)
    return inflight
  }

  /** After the API rejected `rejected` with 401: a fresh token (see `TokenProvider.forceRefresh`). */
  forceRefresh(rejected: string): Promise<string> {
    return this.runtime.run(this.service.forceRefresh(Redacted.make(rejected))).then(Redacted.value)
  }

  /** Releases the provider's connections. Further calls reject with ConfigurationError. */
  close(): Promise<void> {
    return this.runtime.close()
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
 * import { AsyncClientCredentials, AsyncServiceClient } from "service-sdk/promise"
 *
 * await using auth = new AsyncClientCredentials({ clientId: "my-app", clientSecret: process.env.MY_APP_SECRET })
 * const token: string = await auth.getAccessToken()
 * await using client = new AsyncServiceClient({ authProvider: auth })
 * ```
 *
 * @since 0.1.0
 */
export class AsyncClientCredentials extends AsyncTokenProvider<TokenProvider> {
  constructor(options: AsyncOptions<ClientCredentials.Options> = {}) {
    super(
      "AsyncClientCredentials",
      Layer.provide(
        ClientCredentials.layer({ ...options, tokenCache: Runtime.toTokenCache(options.tokenCache) }),
        Runtime.httpClientLayer(options)
      )
    )
  }
}

/**
 * The authorization code grant for plain code: sign-in (`authorizeLocal`, or `beginAuthorization` then
 * `completeAuthorization`), then user tokens renewed with the refresh token.
 *
 * @example
 * ```ts
 * import { AsyncAuthorizationCode } from "service-sdk/promise"
 *
 * await using auth = new AsyncAuthorizationCode({ redirectUri: "http://127.0.0.1:8080/callback" })
 * await auth.authorizeLocal({ scope: ["user-read-private"] }) // opens the browser, waits for the redirect
 * const token: string = await auth.getAccessToken()
 * ```
 *
 * @since 0.1.0
 */
export class AsyncAuthorizationCode extends AsyncTokenProvider<AuthorizationCodeModule.AuthorizationCode> {
  /** @internal */
  readonly authorizationCode: AuthorizationCodeModule.AuthorizationCodeService

  constructor(options: AsyncOptions<AuthorizationCodeModule.Options> = {}) {
    super(
      "AsyncAuthorizationCode",
      Layer.provide(
        AuthorizationCodeModule.AuthorizationCode.layer({
          ...options,
          tokenCache: Runtime.toTokenCache(options.tokenCache)
        }),
        Runtime.httpClientLayer(options)
      )
    )
    this.authorizationCode = this.runtime.runSync(AuthorizationCodeModule.AuthorizationCode)
  }

  /**
   * The code from the URL the authorization server redirected to; throws AuthenticationError (see
   * `AuthorizationCode.parseResponseUrl`).
   */
  static parseResponseUrl(url: string, options: { readonly expectedState?: string | undefined } = {}): string {
    return Runtime.runSyncOrThrow(AuthorizationCodeModule.parseResponseUrl(url, options))
  }

  /** The URL to send the user to. */
  getAuthorizationUrl(options?: AuthorizationCodeModule.AuthorizationUrlOptions): string {
    return this.authorizationCode.getAuthorizationUrl(options)
  }

  /** Exchanges the code from the redirect for tokens, and caches them (public clients pass the PKCE verifier). */
  exchangeCode(code: string, options?: AuthorizationCodeModule.ExchangeCodeOptions): Promise<TokenInfo> {
    return this.runtime.run(this.authorizationCode.exchangeCode(code, options))
  }

  /** Whether this is a public client (no secret). */
  get publicClient(): boolean {
    return this.authorizationCode.publicClient
  }

  /**
   * Starts a sign-in: a fresh state (unless given) and PKCE pair, and the URL to send the user to. Keep `state` and
   * `codeVerifier` server-side until the callback.
   */
  beginAuthorization(
    options?: AuthorizationCodeModule.BeginAuthorizationOptions
  ): Promise<AuthorizationCodeModule.PendingAuthorization> {
    return this.runtime.run(this.authorizationCode.beginAuthorization(options))
  }

  /** Finishes a sign-in: checks the callback's state, exchanges its code with the verifier, caches the tokens. */
  completeAuthorization(
    callbackUrl: string,
    pending: { readonly state: string; readonly codeVerifier: string | Redacted.Redacted<string> }
  ): Promise<TokenInfo> {
    return this.runtime.run(this.authorizationCode.completeAuthorization(callbackUrl, pending))
  }

  /**
   * Runs the authorization code flow on a loopback server and resolves to the tokens (see `asyncAuthorizeLocal`).
   */
  authorizeLocal(options?: AsyncAuthorizeLocalOptions): Promise<TokenInfo> {
    return asyncAuthorizeLocal(this, options)
  }
}
