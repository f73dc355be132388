/**
 * Part 4. Request overhead: authenticated GETs through `ServiceClient` against the emulator vs the same GETs through
 * a raw `HttpClient` with a fixed `Authorization` header, on the same connection pool, same concurrency.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import { ServiceClient, type ServiceClientService, TokenProvider, type TokenProviderService } from "@service-sdk/effect"
import { type Context, makeProvider } from "../context.js"
import { type Measured, measure, throughputRatioOf } from "../harness.js"
import { threadCpuNanos } from "../machine.js"
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
  // main-thread CPU per task, beside the wall-clock figures (robust on a loaded machine)
  const cpu = { sdk: { ns: 0, ops: 0 }, raw: { ns: 0, ops: 0 }, resource: { ns: 0, ops: 0 } }
  const accounted = (key: keyof typeof cpu, batch: Effect.Effect<void, unknown>) => async () => {
    const start = threadCpuNanos()
    await Effect.runPromise(batch)
    const end = threadCpuNanos()
    if (start !== undefined && end !== undefined) {
      cpu[key].ns += end - start
      cpu[key].ops += BATCH
    }
  }
  const sdkBatch = gets(client.http, BATCH)
  const rawBatch = gets(raw, BATCH)
  // 11 interleaved rounds in a full run: one round's ratio moves ±15%; with 7, `http` moved 0.79-0.91× between runs
  const rounds = context.quick ? context.settings.rounds : Math.max(11, context.settings.rounds)
  const [sdk, base, resource] = await measure(
    [
      { name: "ServiceClient", batch: BATCH, async: true, fn: accounted("sdk", sdkBatch) },
      { name: "raw", batch: BATCH, async: true, fn: accounted("raw", rawBatch) },
      { name: "albums.get", batch: BATCH, async: true, fn: accounted("resource", typed) }
    ],
    { ...context.settings, rounds, time: context.settings.time * 2 }
  )
  // mean throughput over the interleaved rounds (a median of batch latencies would hide the GC tail)
  const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length
  const ops = (measured: Measured) => mean(measured.meanRounds.map((ns) => 1e9 / ns))
  const micros = (measured: Measured) => (1e6 / ops(measured)).toFixed(0)
  const cpuMicros = (key: keyof typeof cpu) => cpu[key].ns / cpu[key].ops / 1000
  const cpuNote =
    cpu.raw.ops === 0
      ? "main-thread CPU per request: not available on this platform"
      : `main-thread CPU per request (Linux per-thread counters, warm-up included): raw ${cpuMicros("raw").toFixed(0)} µs, ServiceClient.http ${cpuMicros("sdk").toFixed(0)} µs (raw/http ${(cpuMicros("raw") / cpuMicros("sdk")).toFixed(2)}), albums.get ${cpuMicros("resource").toFixed(0)} µs (raw/albums.get ${(cpuMicros("raw") / cpuMicros("resource")).toFixed(2)})`
  const baseline = { label: "raw HttpClient + fixed bearer header", value: ops(base!), unit: "ops/s" } as const
  return {
    title: "Request overhead (authenticated GETs against the emulator)",
    figures: [
      figure(
        { label: "ServiceClient.http GET + JSON body", value: ops(sdk!), unit: "ops/s" },
        {
          baseline,
          ratio: throughputRatioOf(sdk!.meanRounds, base!.meanRounds),
          target: { on: "ratio", op: ">=", limit: 0.85 }
        }
      ),
      figure(
        { label: "ServiceClient albums.get (schema-decoded)", value: ops(resource!), unit: "ops/s" },
        {
          baseline,
          ratio: throughputRatioOf(resource!.meanRounds, base!.meanRounds),
          target: { on: "ratio", op: ">=", limit: 0.9 }
        }
      )
    ],
    notes: [
      `GET /v1${PATH}; ${BATCH} requests per sample, ${CONCURRENCY} in flight, one undici pool for all three; ratio = mean throughput (operations over total time, GC pauses included) over the raw client's, ${rounds} interleaved rounds (range of per-round ratios in brackets)`,
      cpuNote,
      `wall time per request, ${CONCURRENCY} in flight: raw ${micros(base!)} µs, ServiceClient.http ${micros(sdk!)} µs, albums.get ${micros(resource!)} µs`,
      "the request path uses public APIs only: one forked fiber and a native timer per attempt on the live clock (Effect.timeoutFail on any other), no span when no tracer is installed, the body read within the attempt and decoded once, client.http responses re-made with HttpClientResponse.fromWeb on the request without the token"
    ],
    data: { cpu, serviceClient: sdk, raw: base, albumsGet: resource }
  }
}
