/**
 * The test page of `@service-sdk/promise` in a browser (../promisePackage.test.ts): the built package as a page's bundler
 * takes it (esbuild, platform "browser": the package's `browser` export condition), driven by the test through
 * `window.promiseSdk`. Tokens never leave the page: they are compared there, and reported as counts.
 */
import {
  AsyncAuthorizationCode,
  AsyncClientCredentials,
  AsyncServiceClient,
  asyncAuthorizeLocal,
  browserTokenCache,
  ConfigurationError,
  directoryTokenStore,
  fileTokenCache,
  RedisTokenCache,
  RedisTokenStore
} from "@service-sdk/promise"

export interface Config {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
}

export interface AppTokenResult {
  readonly callers: number
  /** distinct tokens among the callers' */
  readonly distinct: number
  /** token requests this page sent (its `fetch`, counted) */
  readonly tokenRequests: number
  readonly album: string
  readonly tracks: number
}

/** A user's sign-in by redirect with the package's own pieces (public client, PKCE, the tabs' shared cache). */
export interface UserConfig {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly redirectUri: string
  readonly key: string
}

export type SignInResult =
  | { readonly ok: true; readonly user: string; readonly tokenRequests: number }
  | { readonly ok: false; readonly error: string }

export interface Refusal {
  readonly what: string
  /** `name: message`, or "no error" */
  readonly error: string
  readonly configuration: boolean
}

declare global {
  interface Window {
    promiseSdk: {
      readonly appToken: (config: Config, callers: number, key?: string) => Promise<AppTokenResult>
      readonly refusals: (config: Config) => Promise<ReadonlyArray<Refusal>>
      readonly beginSignIn: (config: UserConfig) => Promise<string>
      readonly completeSignIn: (config: UserConfig, callbackUrl: string) => Promise<SignInResult>
      readonly me: (config: UserConfig) => Promise<SignInResult>
    }
  }
}

let tokenRequests = 0
const countingFetch: typeof fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
  if (url.endsWith("/api/token")) tokenRequests++
  return globalThis.fetch(input, init)
}

const appToken = async (config: Config, callers: number, key?: string): Promise<AppTokenResult> => {
  const before = tokenRequests
  const auth = new AsyncClientCredentials({
    authUrl: config.authUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    fetch: countingFetch,
    ...(key === undefined ? {} : { tokenCache: browserTokenCache({ key }) })
  })
  const client = new AsyncServiceClient({ authProvider: auth, apiUrl: config.apiUrl, fetch: countingFetch })
  try {
    const tokens = await Promise.all(Array.from({ length: callers }, () => auth.getAccessToken()))
    const album = await client.albums.get("6akEvsycLGftJxYudPjmqK")
    return {
      callers: tokens.length,
      distinct: new Set(tokens).size,
      tokenRequests: tokenRequests - before,
      album: album.name,
      tracks: album.tracks.items.length
    }
  } finally {
    await client.close()
    await auth.close()
  }
}

const outcome = async (what: string, attempt: () => unknown): Promise<Refusal> => {
  try {
    await attempt()
    return { what, error: "no error", configuration: false }
  } catch (error) {
    const e = error as Error
    return { what, error: `${e.name}: ${e.message}`, configuration: error instanceof ConfigurationError }
  }
}

/** What a page cannot have: each is a ConfigurationError that says why. */
const refusals = async (config: Config): Promise<ReadonlyArray<Refusal>> => [
  await outcome("fileTokenCache", () => fileTokenCache("/tmp/service-sdk/tokens.json")),
  await outcome("directoryTokenStore", () => directoryTokenStore("/tmp/service-sdk/users")),
  await outcome("RedisTokenCache", () =>
    RedisTokenCache.connect({ url: "redis://127.0.0.1:6379", key: "service-sdk:token:page" })
  ),
  await outcome("RedisTokenStore", () =>
    RedisTokenStore.connect({ url: "redis://127.0.0.1:6379", prefix: "service-sdk:user:" })
  ),
  await outcome("asyncAuthorizeLocal", async () => {
    const auth = new AsyncAuthorizationCode({
      authUrl: config.authUrl,
      clientId: "emulator-public-client",
      publicClient: true,
      redirectUri: "http://127.0.0.1:8080/callback"
    })
    try {
      await asyncAuthorizeLocal(auth, { openBrowser: false, onAuthorizationUrl: () => {} })
    } finally {
      await auth.close()
    }
  })
]

// The sign-in of docs/browser.md ("Plain code in a page"), as written there.
const base64Url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")
const PENDING = "my-app/pending-sign-in"

const userAuth = (config: UserConfig) =>
  new AsyncAuthorizationCode({
    authUrl: config.authUrl,
    clientId: config.clientId,
    publicClient: true,
    redirectUri: config.redirectUri,
    tokenCache: browserTokenCache({ key: config.key }),
    fetch: countingFetch
  })

const beginSignIn = async (config: UserConfig): Promise<string> => {
  const state = base64Url(crypto.getRandomValues(new Uint8Array(16)))
  const codeVerifier = base64Url(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier))
  sessionStorage.setItem(PENDING, JSON.stringify({ state, codeVerifier }))
  const auth = userAuth(config)
  try {
    return auth.getAuthorizationUrl({
      state,
      codeChallenge: base64Url(new Uint8Array(digest)),
      scope: ["user-read-private"]
    })
  } finally {
    await auth.close()
  }
}

const me = async (config: UserConfig, before = tokenRequests): Promise<SignInResult> => {
  const auth = userAuth(config)
  const client = new AsyncServiceClient({ authProvider: auth, apiUrl: config.apiUrl, fetch: countingFetch })
  try {
    const user = await client.users.me()
    return { ok: true, user: user.id, tokenRequests: tokenRequests - before }
  } catch (error) {
    return { ok: false, error: `${(error as Error).name}: ${(error as Error).message}` }
  } finally {
    await client.close()
    await auth.close()
  }
}

const completeSignIn = async (config: UserConfig, callbackUrl: string): Promise<SignInResult> => {
  const before = tokenRequests
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? "null") as {
    readonly state: string
    readonly codeVerifier: string
  } | null
  sessionStorage.removeItem(PENDING)
  const auth = userAuth(config)
  try {
    if (pending === null) return { ok: false, error: "no sign-in is pending in this tab" }
    // the state first, then iss, an error, the code; the code exchanged with the verifier
    await auth.completeAuthorization(callbackUrl, pending)
  } catch (error) {
    return { ok: false, error: `${(error as Error).name}: ${(error as Error).message}` }
  } finally {
    await auth.close()
  }
  return me(config, before)
}

window.promiseSdk = { appToken, refusals, beginSignIn, completeSignIn, me: (config) => me(config) }
