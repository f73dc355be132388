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

window.promiseSdk = { appToken, refusals }
