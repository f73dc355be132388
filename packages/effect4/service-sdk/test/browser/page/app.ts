/**
 * The test page: the Effect 4 line as a page would use it (built from the package by esbuild for the browser, see
 * ../support/page.ts). It exposes `window.sdk` for the tests to drive; the token requests it sends are counted by
 * wrapping `fetch` (FetchHttpClient's `Fetch` reference), so a tab knows which of its calls led a renewal.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import {
  AuthorizationCode,
  BrowserSignIn,
  OAuthClient,
  ServiceClient,
  TokenCache,
  TokenProvider
} from "@service-sdk/effect"

import { browserTokenCache } from "../../../src/internal/promise/browserTokenCache.js"

export interface Config {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly redirectUri: string
  readonly key?: string
}

export interface LoopResult {
  readonly calls: number
  readonly failures: ReadonlyArray<string>
  readonly invalidGrant: number
  readonly tokenRequests: number
  /** Longest getAccessToken of a call during which this tab sent no token request (it waited on another tab). */
  readonly longestFollowerWaitMs: number
  readonly longestLeaderWaitMs: number
  readonly tokens: ReadonlyArray<string>
}

let tokenRequests = 0
const countingFetch: typeof fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
  if (url.endsWith("/api/token")) tokenRequests++
  return globalThis.fetch(input, init)
}

const config = (): Config => JSON.parse(sessionStorage.getItem("test-config") ?? "null") as Config

const http = FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, countingFetch)))
const oauthLayer = (c: Config) =>
  OAuthClient.layer({ clientId: c.clientId, publicClient: true, authUrl: c.authUrl, redirectUri: c.redirectUri }).pipe(
    Layer.provide(http)
  )
const cacheOf = (c: Config) => TokenCache.browser(c.key === undefined ? {} : { key: c.key })

const appLayer = (c: Config) =>
  Layer.unwrap(
    Effect.map(cacheOf(c), (tokenCache) =>
      ServiceClient.layer({ apiUrl: c.apiUrl }).pipe(
        Layer.provideMerge(
          AuthorizationCode.layer({
            clientId: c.clientId,
            publicClient: true,
            authUrl: c.authUrl,
            redirectUri: c.redirectUri,
            tokenCache
          })
        ),
        Layer.provide(http)
      )
    )
  )

const errorText = (cause: unknown) => {
  const error = cause as { readonly _tag?: string; readonly message?: string; readonly payload?: { error?: string } }
  return `${error?._tag ?? "?"}${error?.payload?.error !== undefined ? `(${error.payload.error})` : ""}: ${error?.message ?? String(cause)}`
}

const sdk = {
  configure: (c: Config) => sessionStorage.setItem("test-config", JSON.stringify(c)),
  /** Starts the redirect sign-in in this tab (the page navigates away). */
  signIn: (scope: string) =>
    Effect.runPromise(
      Effect.provide(
        Effect.flatMap(BrowserSignIn.start({ scope }), (url) => Effect.sync(() => window.location.assign(url))),
        oauthLayer(config())
      )
    ),
  /** Begins a sign-in without leaving the page: the consent page's URL (the tests follow it themselves). */
  begin: (scope: string) => Effect.runPromise(Effect.provide(BrowserSignIn.start({ scope }), oauthLayer(config()))),
  /** Completes a sign-in from `url` (default: this page's address); the token goes to the shared cache. */
  complete: async (url?: string) => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(
        Effect.flatMap(cacheOf(config()), (tokenCache) =>
          BrowserSignIn.complete({ tokenCache, ...(url === undefined ? {} : { callbackUrl: url }) })
        ),
        oauthLayer(config())
      )
    )
    return Exit.isSuccess(exit)
      ? { ok: true as const, scope: exit.value.scope }
      : { ok: false as const, error: errorText(Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined) }
  },
  /** Whether this tab has a pending sign-in, and whether the address is a callback. */
  status: () => ({ pending: BrowserSignIn.hasPending(), callback: BrowserSignIn.isCallback(), href: location.href }),
  /** getAccessToken and `/me` in a loop for `millis`, counting what happened. */
  loop: async (millis: number): Promise<LoopResult> => {
    const runtime = ManagedRuntime.make(appLayer(config()))
    const failures: Array<string> = []
    const tokens = new Set<string>()
    let calls = 0
    let invalidGrant = 0
    let longestFollowerWaitMs = 0
    let longestLeaderWaitMs = 0
    const startRequests = tokenRequests
    const end = performance.now() + millis
    try {
      while (performance.now() < end) {
        calls++
        const before = tokenRequests
        const started = performance.now()
        const exit = await runtime.runPromiseExit(
          Effect.gen(function* () {
            const provider = yield* TokenProvider
            const token = yield* provider.getAccessToken
            const waited = performance.now() - started
            tokens.add(Redacted.value(token).slice(-8))
            if (tokenRequests === before) longestFollowerWaitMs = Math.max(longestFollowerWaitMs, waited)
            else longestLeaderWaitMs = Math.max(longestLeaderWaitMs, waited)
            const client = yield* ServiceClient
            return yield* client.users.me
          })
        )
        if (Exit.isFailure(exit)) {
          const text = errorText(Cause.squash(exit.cause))
          if (text.includes("invalid_grant")) invalidGrant++
          if (failures.length < 20) failures.push(text)
          else failures.push("…")
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    } finally {
      await runtime.dispose()
    }
    return {
      calls,
      failures,
      invalidGrant,
      tokenRequests: tokenRequests - startRequests,
      longestFollowerWaitMs: Math.round(longestFollowerWaitMs),
      longestLeaderWaitMs: Math.round(longestLeaderWaitMs),
      tokens: [...tokens]
    }
  },
  /** Takes the cache's lock and keeps it (the tests close this tab while it holds it). */
  holdLock: () =>
    new Promise<void>((held, failed) => {
      Effect.runFork(
        Effect.flatMap(cacheOf(config()), (cache) =>
          cache.withLock!(Effect.flatMap(Effect.sync(held), () => Effect.never))
        )
      ).addObserver((exit) => {
        if (Exit.isFailure(exit)) failed(new Error("holdLock failed"))
      })
    }),
  /** One getAccessToken (for the lock test): milliseconds and outcome. */
  getAccessTokenOnce: async () => {
    const runtime = ManagedRuntime.make(appLayer(config()))
    const started = performance.now()
    try {
      const exit = await runtime.runPromiseExit(Effect.flatMap(TokenProvider, (p) => p.getAccessToken))
      return { ok: Exit.isSuccess(exit), millis: Math.round(performance.now() - started) }
    } finally {
      await runtime.dispose()
    }
  },
  /** The Promise facade's cache: the same entry as TokenCache.browser's (read through the Effect API). */
  promiseCacheHasEntry: async () => {
    const cache = browserTokenCache(config().key === undefined ? {} : { key: config().key! })
    const found = await Effect.runPromise(cache.get)
    return found._tag === "Some" && typeof cache.withLock === "function" && typeof cache.compareAndSet === "function"
  },
  /** The cache's ConfigurationError without Web Locks (the test deletes navigator.locks first). */
  cacheWithoutLocks: async () => {
    const exit = await Effect.runPromiseExit(TokenCache.browser())
    return Exit.isFailure(exit) ? errorText(Cause.squash(exit.cause)) : "made"
  },
  /** The entry as stored, decoded (test inspection). */
  stored: async () => {
    const exit = await Effect.runPromiseExit(Effect.flatMap(cacheOf(config()), (cache) => cache.get))
    return Exit.isSuccess(exit) && exit.value._tag === "Some"
      ? { refresh: exit.value.value.refreshToken !== undefined, expiresAt: exit.value.value.expiresAt }
      : undefined
  }
}

declare global {
  interface Window {
    sdk: typeof sdk
    ready: Promise<unknown>
  }
}
window.sdk = sdk
// the redirect target: complete the sign-in this tab began
window.ready = BrowserSignIn.isCallback() && BrowserSignIn.hasPending() ? sdk.complete() : Promise.resolve(undefined)
