/**
 * What a scenario needs from a line: each line implements it once over its public API (`test/conformance/driver.ts`,
 * the same path in both lines). Plain types only: options as plain values, results as {@link Outcome}s whose errors are
 * described by {@link ErrorShape}, so one scenario reads the same against either line.
 */

/** An SDK error as a scenario sees it. */
export interface ErrorShape {
  readonly _tag: string
  readonly message: string
  readonly status?: number | undefined
  /** `instanceof ServiceError` of that line */
  readonly isServiceError: boolean
  /** everything the error would show: `String(error)`, its message, its own fields, JSON-ish (for leak checks) */
  readonly shown: string
}

export type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ErrorShape }

/** A stored token as plain values (the `TokenInfo` of either line). */
export interface TokenShape {
  readonly accessToken: string
  readonly refreshToken?: string | undefined
  readonly expiresAt: number
  readonly scope?: string | undefined
}

/** The options scenarios use; durations as Effect duration strings ("2 seconds"), both lines read them alike. */
export interface ProviderOptions {
  readonly clientId?: string
  readonly clientSecret?: string
  readonly authUrl?: string
  readonly scope?: string | ReadonlyArray<string>
  readonly maxRetries?: number
  readonly timeout?: string | number
  readonly skew?: string
  readonly publicClient?: boolean
  readonly redirectUri?: string
  readonly refreshToken?: string
  readonly issuer?: string
  /** a `TokenCache.file` at this path instead of the default memory cache */
  readonly tokenCacheFile?: string
}

export interface Provider {
  readonly getAccessToken: () => Promise<Outcome<string>>
  readonly forceRefresh: (rejected: string) => Promise<Outcome<string>>
  readonly close: () => Promise<void>
}

export interface AuthorizationCodeProvider extends Provider {
  readonly getAuthorizationUrl: (options?: {
    readonly state?: string
    readonly scope?: string | ReadonlyArray<string>
    readonly showDialog?: boolean
    readonly codeChallenge?: string
  }) => string
  readonly beginAuthorization: OAuth["beginAuthorization"]
  readonly completeAuthorization: OAuth["completeAuthorization"]
  readonly exchangeCode: (code: string, codeVerifier?: string) => Promise<Outcome<TokenShape>>
}

export interface OAuth {
  readonly authorizationUrl: (options?: {
    readonly state?: string
    readonly scope?: string | ReadonlyArray<string>
    readonly showDialog?: boolean
    readonly codeChallenge?: string
  }) => string
  readonly beginAuthorization: () => Promise<{
    readonly url: string
    readonly state: string
    readonly codeVerifier: string
  }>
  readonly completeAuthorization: (
    callbackUrl: string,
    pending: { readonly state: string; readonly codeVerifier: string }
  ) => Promise<Outcome<TokenShape>>
  readonly refresh: (refreshToken: string) => Promise<Outcome<TokenShape>>
  readonly clientCredentials: () => Promise<Outcome<TokenShape>>
}

/** `UserTokens` on a `TokenStore.memory()`. */
export interface Users {
  readonly signIn: (userId: string, token: TokenShape) => Promise<Outcome<void>>
  readonly signOut: (userId: string) => Promise<Outcome<void>>
  /** the user's stored entry cleared behind `UserTokens` (another process's sign-out) */
  readonly clearElsewhere: (userId: string) => Promise<Outcome<void>>
  readonly getAccessToken: (userId: string) => Promise<Outcome<string>>
  readonly close: () => Promise<void>
}

export interface ApiOptions {
  readonly apiUrl: string
  readonly maxRetries?: number
  readonly maxRetryAfter?: string
  /** a fixed bearer token; else `provider` (client credentials) */
  readonly accessToken?: string
  readonly provider?: ProviderOptions
}

export interface Api {
  /** `request("GET", path)` of the line's ServiceClient: the decoded JSON body, or undefined for 204 */
  readonly get: (path: string) => Promise<Outcome<unknown>>
  readonly albumName: (id: string) => Promise<Outcome<string>>
  readonly close: () => Promise<void>
}

export interface Driver {
  readonly line: "effect3" | "effect4"
  readonly clientCredentials: (options: ProviderOptions) => Promise<Outcome<Provider>>
  readonly authorizationCode: (options: ProviderOptions) => Promise<Outcome<AuthorizationCodeProvider>>
  readonly oauthClient: (options: ProviderOptions) => Promise<Outcome<OAuth>>
  readonly userTokens: (options: ProviderOptions) => Promise<Outcome<Users>>
  readonly parseResponseUrl: (url: string, expectedState?: string) => Promise<Outcome<string>>
  readonly serviceClient: (options: ApiOptions) => Promise<Outcome<Api>>
}
