/**
 * One Effect line as the side-by-side benchmark (`packages/effect4/bench`) drives it: each line's own code builds its
 * providers, clients and floors in its own `effect`, and hands the runner plain functions returning Promises, so that
 * one process (on the Node of the Effect 4 line) measures both lines in interleaved rounds. This is the Effect 3
 * line's driver; `packages/effect4/bench/src/line.ts` is the Effect 4 line's, to the same interface.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import { ClientCredentials, ServiceClient, TokenProvider } from "@service-sdk/effect"
import { ablatedSdk, EFFECT3_UNBOUNDED } from "./ablation.js"
import { repeat } from "./context.js"

/** Where the emulator is and its default client. */
export interface Target {
  readonly authUrl: string
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
}

/** A provider with an empty cache. */
export interface FreshProvider {
  /** one getAccessToken */
  readonly one: () => Promise<unknown>
  /** `k` concurrent getAccessToken fibers in one run */
  readonly herd: (k: number) => Promise<unknown>
  /**
   * The Effect-only floor of a herd, in the line's own `effect`: one cold getAccessToken completes a `Deferred` that
   * `k` - 1 other fibers await (k fibers in one `Effect.all`, as the herd)
   */
  readonly floor: (k: number) => Promise<unknown>
}

export interface Line {
  /** e.g. "Effect 3 (service-sdk 1.x, effect 3.22.4)" */
  readonly name: string
  /** `n` cached getAccessToken calls in one run, on a provider that already has its token */
  readonly cachedBatch: (n: number) => Promise<() => Promise<unknown>>
  /** the floor of it, in the same line's effect: `n` times an Effect doing `Ref.get`, `Clock`, compare */
  readonly floorBatch: (n: number) => () => Promise<unknown>
  readonly freshProvider: () => Promise<FreshProvider>
  /**
   * `count` GETs of `path` (body read as JSON), `concurrency` in flight: through `ServiceClient.http`, through a
   * raw `HttpClient` with a fixed bearer header, bare and with `Effect.timeout` per request at the SDK's default
   * attempt timeout (the like-for-like baseline), all on the line's `FetchHttpClient`, and `count`
   * `albums.get(album)` (Schema-decoded) through the same client; the same two through an ablation of the SDK with
   * the per-attempt bound removed (`ablation.ts`; undefined, with the reason, when it cannot be built)
   */
  readonly requests: (path: string, album: string, count: number, concurrency: number) => Promise<Requests>
}

/** What `Line.requests` returns: one batch each. */
export interface Requests {
  readonly sdk: () => Promise<unknown>
  readonly raw: () => Promise<unknown>
  readonly bounded: () => Promise<unknown>
  readonly typed: () => Promise<unknown>
  readonly unbounded:
    | { readonly sdk: () => Promise<unknown>; readonly typed: () => Promise<unknown> }
    | { readonly missing: string }
}

/** The SDK's default per-attempt timeout (`ServiceClientOptions.timeout`, default 30 s; both lines). */
export const SDK_ATTEMPT_TIMEOUT = "30 seconds"

/** The Effect 3 line (service-sdk 1.x), on `@effect/platform`'s `FetchHttpClient`. */
export const effect3Line = async (target: Target, effectVersion: string): Promise<Line> => {
  const http = await Effect.runPromise(Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer))
  const credentials = { clientId: target.clientId, clientSecret: target.clientSecret, authUrl: target.authUrl }
  // providers live as long as the bench process (a provider's scope holds its background renewals)
  const scope = Effect.runSync(Scope.make())
  const makeProvider = () =>
    Effect.runPromise(
      ClientCredentials.make(credentials).pipe(Effect.provideService(HttpClient.HttpClient, http), Scope.extend(scope))
    )
  const gets = (client: HttpClient.HttpClient.With<unknown>, path: string, count: number, concurrency: number) =>
    Effect.forEach(
      Array.from({ length: count }, () => path),
      (each) => Effect.flatMap(client.get(each), (response) => response.json),
      { concurrency, discard: true }
    )
  return {
    name: `Effect 3 (service-sdk 1.x, effect ${effectVersion})`,
    cachedBatch: async (n) => {
      const provider = await makeProvider()
      await Effect.runPromise(provider.getAccessToken)
      const batch = repeat(provider.getAccessToken, n)
      return () => Effect.runPromise(batch)
    },
    floorBatch: (n) => {
      const memo = Ref.unsafeMake(
        Option.some({ token: Redacted.make("floor"), staleAt: Effect.runSync(Clock.currentTimeMillis) + 3_600_000 })
      )
      const floor = Effect.flatMap(Ref.get(memo), (entry) =>
        Effect.map(Clock.currentTimeMillis, (now) =>
          Option.isSome(entry) && now < entry.value.staleAt ? entry.value.token : undefined
        )
      )
      const batch = repeat(floor, n)
      return () => Effect.runPromise(batch)
    },
    freshProvider: async () => {
      const provider = await makeProvider()
      return {
        one: () => Effect.runPromise(provider.getAccessToken),
        herd: (k) =>
          Effect.runPromise(
            Effect.all(
              Array.from({ length: k }, () => provider.getAccessToken),
              { concurrency: "unbounded", discard: true }
            )
          ),
        floor: (k) =>
          Effect.runPromise(
            Effect.flatMap(Deferred.make<Redacted.Redacted<string>>(), (done) =>
              Effect.all(
                [
                  Effect.flatMap(provider.getAccessToken, (token) => Deferred.succeed(done, token)),
                  ...Array.from({ length: k - 1 }, () => Deferred.await(done))
                ],
                { concurrency: "unbounded", discard: true }
              )
            )
          )
      }
    },
    requests: async (path, album, count, concurrency) => {
      const provider = await makeProvider()
      const token = await Effect.runPromise(provider.getAccessToken)
      const client = await Effect.runPromise(
        ServiceClient.make({ apiUrl: target.apiUrl }).pipe(
          Effect.provideService(TokenProvider, provider),
          Effect.provideService(HttpClient.HttpClient, http)
        )
      )
      const raw = http.pipe(
        HttpClient.mapRequest((request) =>
          HttpClientRequest.bearerToken(HttpClientRequest.prependUrl(request, target.apiUrl), token)
        ),
        HttpClient.filterStatusOk
      )
      const sdk = gets(client.http, path, count, concurrency)
      const base = gets(raw, path, count, concurrency)
      const bounded = Effect.forEach(
        Array.from({ length: count }, () => path),
        (each) =>
          Effect.timeout(
            Effect.flatMap(raw.get(each), (response) => response.json),
            SDK_ATTEMPT_TIMEOUT
          ),
        { concurrency, discard: true }
      )
      const albums = (service: { readonly albums: typeof client.albums }) =>
        Effect.forEach(
          Array.from({ length: count }, () => album),
          (id) => service.albums.get(id),
          { concurrency, discard: true }
        )
      const typed = albums(client)
      const ablation = await ablatedSdk<typeof import("@service-sdk/effect")>(
        import.meta.resolve("@service-sdk/effect"),
        fileURLToPath(new URL("../ablation/effect3.js", import.meta.url)),
        EFFECT3_UNBOUNDED
      )
      let unbounded: Requests["unbounded"]
      if ("module" in ablation) {
        const ablated = await Effect.runPromise(
          ablation.module.ServiceClient.make({ apiUrl: target.apiUrl }).pipe(
            Effect.provideService(ablation.module.TokenProvider, provider),
            Effect.provideService(HttpClient.HttpClient, http)
          )
        )
        const ablatedSdk = gets(ablated.http, path, count, concurrency)
        const ablatedTyped = albums(ablated)
        unbounded = { sdk: () => Effect.runPromise(ablatedSdk), typed: () => Effect.runPromise(ablatedTyped) }
      } else {
        unbounded = ablation
      }
      return {
        sdk: () => Effect.runPromise(sdk),
        raw: () => Effect.runPromise(base),
        bounded: () => Effect.runPromise(bounded),
        typed: () => Effect.runPromise(typed),
        unbounded
      }
    }
  }
}
