/**
 * Part 4. Request overhead: authenticated GETs through `ServiceClient` against the emulator vs the same GETs through
 * a raw `HttpClient` with a fixed `Authorization` header, on the same connection pool, same concurrency.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import { ServiceClient, type ServiceClientService, TokenProvider, type TokenProviderService } from "service-sdk"
import { type Context, makeProvider } from "../context.js"
import { measure, ratioOf } from "../harness.js"
import { figure } from "../report.js"
import type { PartResult } from "./part.js"

export const ALBUM = "6akEvsycLGftJxYudPjmqK"
const PATH = `/albums/${ALBUM}`
/** how many requests are in flight at once */
export const CONCURRENCY = 8

/** A ServiceClient on `provider` and the shared pool. */
export const makeClient = (context: Context, provider: TokenProviderService): Promise<ServiceClientService> =>
  Effect.runPromise(
    ServiceClient.make({ apiUrl: context.emulator.apiUrl }).pipe(
      Effect.provideService(TokenProvider, provider),
      Effect.provideService(HttpClient.HttpClient, context.http)
    )
  )

/** `count` GETs of the album through `client`, `CONCURRENCY` at a time, each body read as JSON. */
export const gets = (client: HttpClient.HttpClient.With<unknown>, count: number) =>
  Effect.forEach(
    Array.from({ length: count }, () => PATH),
    (path) => Effect.flatMap(client.get(path), (response) => response.json),
    { concurrency: CONCURRENCY, discard: true }
  )

export const requestOverhead = async (context: Context): Promise<PartResult> => {
  // requests per sample
  const BATCH = context.quick ? 40 : 200
  const provider = await makeProvider(context)
  const token = await Effect.runPromise(provider.getAccessToken)
  const client = await makeClient(context, provider)
  const raw = context.http.pipe(
    HttpClient.mapRequest((request) =>
      HttpClientRequest.bearerToken(HttpClientRequest.prependUrl(request, context.emulator.apiUrl), token)
    ),
    HttpClient.filterStatusOk
  )
  const typed = Effect.forEach(
    Array.from({ length: BATCH }, () => ALBUM),
    (id) => client.albums.get(id),
    {
      concurrency: CONCURRENCY,
      discard: true
    }
  )
  const sdkBatch = gets(client.http, BATCH)
  const rawBatch = gets(raw, BATCH)
  const [sdk, base, resource] = await measure(
    [
      { name: "ServiceClient", batch: BATCH, async: true, fn: () => Effect.runPromise(sdkBatch) },
      { name: "raw", batch: BATCH, async: true, fn: () => Effect.runPromise(rawBatch) },
      { name: "albums.get", batch: BATCH, async: true, fn: () => Effect.runPromise(typed) }
    ],
    // at least 7 interleaved rounds in a full run: the median and its spread over rounds are the figure
    {
      ...context.settings,
      rounds: context.quick ? context.settings.rounds : Math.max(7, context.settings.rounds),
      time: context.settings.time * 2
    }
  )
  const ops = (nsPerOp: number) => 1e9 / nsPerOp
  const baseline = { label: "raw HttpClient + fixed bearer header", value: ops(base!.nsPerOp), unit: "ops/s" } as const
  return {
    title: "Request overhead (authenticated GETs against the emulator)",
    figures: [
      figure(
        { label: "ServiceClient.http GET + JSON body", value: ops(sdk!.nsPerOp), unit: "ops/s" },
        { baseline, ratio: ratioOf(base!.rounds, sdk!.rounds), target: { on: "ratio", op: ">=", limit: 0.95 } }
      ),
      figure(
        { label: "ServiceClient albums.get (schema-decoded)", value: ops(resource!.nsPerOp), unit: "ops/s" },
        {
          baseline,
          ratio: ratioOf(base!.rounds, resource!.rounds),
          target: { on: "ratio", op: ">=", limit: 0.75 }
        }
      )
    ],
    notes: [
      `GET /v1${PATH}; ${BATCH} requests per sample, ${CONCURRENCY} in flight, one undici pool for both; ratio = throughput over the raw client's, median of ${context.quick ? context.settings.rounds : Math.max(7, context.settings.rounds)} interleaved rounds (range in brackets)`,
      "the request path uses public APIs only: Effect.timeoutFail per attempt, the body read within the attempt, responses re-made with HttpClientResponse.fromWeb"
    ],
    data: { serviceClient: sdk, raw: base, albumsGet: resource }
  }
}
