// The Effect 4 line's side of the side-by-side bench (sideBySide.mjs runs it beside the Effect 3 side, same Node).
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { measure } from "../../shared/bench/measure.mjs"
import { ClientCredentials, ServiceClient } from "../service-sdk/dist/index.js"

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
const makeProvider = () => Effect.runPromise(Effect.provide(ClientCredentials.make(options), MockLayer))

const figures = await measure({
  Effect,
  cachedBaseline: Effect.runSync(Effect.map(Ref.make(1), (ref) => Effect.zip(Ref.get(ref), Clock.currentTimeMillis))),
  makeProvider,
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
    const provider = await makeProvider()
    const client = await Effect.runPromise(
      Effect.provide(ServiceClient.makeWith(provider, { apiUrl: "https://api.example/v1" }), MockLayer)
    )
    return Effect.flatMap(client.http.get("/albums/a1"), (response) => response.json)
  }
})
console.log(JSON.stringify({ line: 4, ...figures }))
