// The Effect 3 line's side of the side-by-side bench (packages/effect4/bench/sideBySide.mjs runs it on the same Node
// as the Effect 4 side). Prints one JSON line of figures; see measure.mjs for what each is.
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { ClientCredentials, ServiceClient } from "../../service-sdk/dist/index.js"
import { measure } from "./measure.mjs"

let tokenRequests = 0
const mock = HttpClient.make((request) =>
  Effect.sync(() => {
    if (request.url.includes("/api/token")) {
      tokenRequests++
      return HttpClientResponse.fromWeb(
        request,
        new Response(JSON.stringify({ access_token: `t${tokenRequests}`, token_type: "Bearer", expires_in: 3600 }), {
          headers: { "content-type": "application/json" }
        })
      )
    }
    return HttpClientResponse.fromWeb(
      request,
      new Response('{"id":"a1"}', { headers: { "content-type": "application/json" } })
    )
  })
)
const MockLayer = Layer.succeed(HttpClient.HttpClient, mock)
const options = { clientId: "id", clientSecret: "secret", authUrl: "https://auth.example" }

const figures = await measure({
  Effect,
  cachedBaseline: Effect.runSync(Effect.map(Ref.make(1), (ref) => Effect.zip(Ref.get(ref), Clock.currentTimeMillis))),
  makeProvider: () => Effect.runPromise(Effect.provide(ClientCredentials.make(options), MockLayer)),
  tokenRequests: () => tokenRequests,
  rawRequest: Effect.flatMap(
    mock.execute(
      HttpClientRequest.get("https://api.example/v1/albums/a1").pipe(
        HttpClientRequest.setHeader("authorization", "Bearer t")
      )
    ),
    (response) => response.json
  ),
  makeClientRequest: async () => {
    const client = await Effect.runPromise(
      Effect.provide(
        ServiceClient.makeWith(await Effect.runPromise(Effect.provide(ClientCredentials.make(options), MockLayer)), {
          apiUrl: "https://api.example/v1"
        }),
        MockLayer
      )
    )
    return Effect.flatMap(client.http.get("/albums/a1"), (response) => response.json)
  }
})
console.log(JSON.stringify({ line: 3, ...figures }))
