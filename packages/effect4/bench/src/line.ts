/**
 * The Effect 4 line's driver of the side-by-side benchmark: the same interface as the Effect 3 line's
 * (`packages/bench/src/internal/line.ts`), built with service-sdk 2.x in Effect 4, on `effect/http`'s
 * `FetchHttpClient` (the Effect 3 driver uses `@effect/platform`'s: one transport, Node's fetch, for both).
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { ClientCredentials, ServiceClient } from "@service-sdk/effect"
import { fileURLToPath } from "node:url"
import { ablatedSdk, EFFECT4_UNBOUNDED } from "../../../bench/dist/internal/ablation.js"
import { type Line, type Requests, SDK_ATTEMPT_TIMEOUT, type Target } from "../../../bench/dist/internal/line.js"

/** `effect` run `n` times in sequence, in one Effect. */
const repeat = <A, E>(effect: Effect.Effect<A, E>, n: number): Effect.Effect<void, E> => {
  const loop = (left: number): Effect.Effect<void, E> =>
    left === 0 ? Effect.void : Effect.flatMap(effect, () => loop(left - 1))
  return Effect.suspend(() => loop(n))
}

/** The Effect 4 line (service-sdk 2.x). */
export const effect4Line = async (target: Target, effectVersion: string): Promise<Line> => {
  const http = await Effect.runPromise(
    Effect.provide(
      Effect.gen(function* () {
        return yield* HttpClient.HttpClient
      }),
      FetchHttpClient.layer
    )
  )
  const credentials = { clientId: target.clientId, clientSecret: target.clientSecret, authUrl: target.authUrl }
  // the providers live for the whole run: one scope, never closed
  const providers = Scope.makeUnsafe()
  const makeProvider = () =>
    Effect.runPromise(
      ClientCredentials.make(credentials).pipe(
        Effect.provideService(HttpClient.HttpClient, http),
        Scope.provide(providers)
      )
    )
  const gets = <E>(client: HttpClient.HttpClient.With<E>, path: string, count: number, concurrency: number) =>
    Effect.forEach(
      Array.from({ length: count }, () => path),
      (each) => Effect.flatMap(client.get(each), (response) => response.json),
      { concurrency, discard: true }
    )
  return {
    name: `Effect 4 (service-sdk 2.x, effect ${effectVersion})`,
    cachedBatch: async (n) => {
      const provider = await makeProvider()
      await Effect.runPromise(provider.getAccessToken)
      const batch = repeat(provider.getAccessToken, n)
      return () => Effect.runPromise(batch)
    },
    floorBatch: (n) => {
      const memo = Ref.makeUnsafe(
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
        ServiceClient.makeWith(provider, { apiUrl: target.apiUrl }).pipe(
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
        fileURLToPath(new URL("./ablation/effect4.js", import.meta.url)),
        EFFECT4_UNBOUNDED
      )
      let unbounded: Requests["unbounded"]
      if ("module" in ablation) {
        const ablated = await Effect.runPromise(
          ablation.module.ServiceClient.makeWith(provider, { apiUrl: target.apiUrl }).pipe(
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
