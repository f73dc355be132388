/**
 * The facade's default `HttpClient`: `NodeHttpClient.layerUndici`, loaded on the first request instead of at
 * import (undici is a large part of what `import "@service-sdk/effect/promise"` would load). The layer is built
 * synchronously (so constructors still throw at once); the pool it opens belongs to the facade's runtime and is
 * closed by `close()`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const load = Effect.promise(() => import("@effect/platform-node/NodeHttpClient"))

export const layerUndiciOnFirstUse: Layer.Layer<HttpClient.HttpClient> = Layer.scoped(
  HttpClient.HttpClient,
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const client = yield* Effect.cached(
      load.pipe(
        Effect.flatMap((module) => Layer.buildWithScope(module.layerUndici, scope)),
        Effect.map((context) => Context.get(context, HttpClient.HttpClient))
      )
    )
    return HttpClient.makeWith(
      (request: Effect.Effect<HttpClientRequest.HttpClientRequest>) =>
        Effect.flatMap(client, (undici) => Effect.flatMap(request, undici.execute)),
      Effect.succeed
    )
  })
)
