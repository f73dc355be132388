/**
 * The peers, each set up the way its users would for the same work (an app token from the emulator, cached), and
 * the naive hand-written class.
 */
import { ClientCredentialsStrategy, InMemoryCachingStrategy, type SdkConfiguration } from "@spotify/web-api-ts-sdk"
import { OAuth2Client } from "google-auth-library"
import { type AccessToken, ClientCredentials as SimpleClientCredentials } from "simple-oauth2"
import type { WorkerEmulator } from "./emulator.js"
import { wallClockMillis } from "./machine.js"

/** A token getter: `get()` resolves to an access token, cached while valid. */
export interface Peer {
  readonly get: () => Promise<string>
}

const basic = (emulator: WorkerEmulator) =>
  `Basic ${Buffer.from(`${emulator.clientId}:${emulator.clientSecret}`).toString("base64")}`

/** What many projects write by hand: a cached token, a fetch when it is stale, no sharing of the fetch. */
export class NaiveTokenCache implements Peer {
  #token: string | undefined
  #expiresAt = 0

  constructor(private readonly emulator: WorkerEmulator) {}

  async get(): Promise<string> {
    if (this.#token !== undefined && wallClockMillis() < this.#expiresAt - 30_000) return this.#token
    const response = await fetch(`${this.emulator.authUrl}/api/token`, {
      method: "POST",
      headers: { authorization: basic(this.emulator), "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials"
    })
    if (!response.ok) throw new Error(`token request failed: ${response.status}`)
    const body = (await response.json()) as { readonly access_token: string; readonly expires_in: number }
    this.#token = body.access_token
    this.#expiresAt = wallClockMillis() + body.expires_in * 1000
    return body.access_token
  }
}

/** The wrapper simple-oauth2's users write around `getToken` (its README's pattern). */
export class SimpleOAuth2Wrapper implements Peer {
  readonly #client: SimpleClientCredentials
  #token: AccessToken | undefined

  constructor(emulator: WorkerEmulator) {
    this.#client = new SimpleClientCredentials({
      client: { id: emulator.clientId, secret: emulator.clientSecret },
      auth: { tokenHost: emulator.authUrl, tokenPath: "/api/token" }
    })
  }

  async get(): Promise<string> {
    if (this.#token === undefined || this.#token.expired(30)) this.#token = await this.#client.getToken({})
    return this.#token.token.access_token as string
  }
}

/** google-auth-library's OAuth2Client on the emulator's token endpoint, renewing with a refresh token. */
export const googleAuth = (
  emulator: WorkerEmulator,
  credentials: { refresh_token?: string; access_token?: string }
) => {
  const client = new OAuth2Client({
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    endpoints: { oauth2TokenUrl: `${emulator.authUrl}/api/token` }
  })
  return {
    client,
    setCredentials: (expiryDate: number) => client.setCredentials({ ...credentials, expiry_date: expiryDate })
  }
}

export const googleAuthPeer = (client: OAuth2Client): Peer => ({
  get: async () => (await client.getAccessToken()).token!
})

const SPOTIFY_ACCOUNTS = "https://accounts.spotify.com"

/**
 * `@spotify/web-api-ts-sdk`'s client credentials strategy asks a fixed URL: `globalThis.fetch` is wrapped to send its
 * token requests to the emulator instead (every other URL passes through). Returns the undo.
 */
export const redirectSpotifyAccounts = (emulator: WorkerEmulator): (() => void) => {
  const original = globalThis.fetch
  globalThis.fetch = (input, init) =>
    original(
      typeof input === "string" && input.startsWith(SPOTIFY_ACCOUNTS)
        ? `${emulator.authUrl}${input.slice(SPOTIFY_ACCOUNTS.length)}`
        : input,
      init
    )
  return () => {
    globalThis.fetch = original
  }
}

export const spotify = (emulator: WorkerEmulator): Peer => {
  const strategy = new ClientCredentialsStrategy(emulator.clientId, emulator.clientSecret)
  strategy.setConfiguration({ cachingStrategy: new InMemoryCachingStrategy() } as unknown as SdkConfiguration)
  return { get: async () => (await strategy.getOrCreateAccessToken()).access_token }
}

/** A refresh token from the emulator: the authorization code flow with auto-approval, then the code exchange. */
export const obtainRefreshToken = async (emulator: WorkerEmulator): Promise<string> => {
  const redirectUri = "http://127.0.0.1:9/callback"
  const authorize = new URL(`${emulator.authUrl}/authorize`)
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: emulator.clientId,
    redirect_uri: redirectUri,
    scope: "user-read-private",
    state: "bench"
  }).toString()
  const redirect = await fetch(authorize, { redirect: "manual" })
  const code = new URL(redirect.headers.get("location") ?? redirectUri).searchParams.get("code")
  if (code === null) throw new Error(`the emulator did not approve (status ${redirect.status})`)
  const response = await fetch(`${emulator.authUrl}/api/token`, {
    method: "POST",
    headers: { authorization: basic(emulator), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri }).toString()
  })
  const body = (await response.json()) as { readonly refresh_token?: string }
  if (body.refresh_token === undefined)
    throw new Error(`the code exchange returned no refresh token (${response.status})`)
  return body.refresh_token
}
