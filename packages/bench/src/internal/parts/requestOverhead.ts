/**
 * Part 4. Request overhead: authenticated GETs through `ServiceClient` against the emulator vs the same GETs through
 * a raw `HttpClient` with a fixed `Authorization` header, on the same connection pool, same concurrency. The baseline
 * with a target is like for like (issue 43): the raw client with `Effect.timeout` per request at the SDK's default
 * attempt timeout (what a careful user writes: the platform leaves timeouts to `Effect.timeout`). Beside it, as
 * information: the bare raw client (no timeout), and an ablation of the SDK with the per-attempt bound removed
 * (`ablation.ts`: the SDK's build bundled by the bench with `attemptTimeout.js` replaced; the SDK is not changed).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import { ServiceClient, type ServiceClientService, TokenProvider, type TokenProviderService } from "@service-sdk/effect"
import { ablatedSdk, EFFECT3_UNBOUNDED } from "../ablation.js"
import { type Context, makeProvider } from "../context.js"
import { type Measured, measure, type Task, throughputRatioOf } from "../harness.js"
import { threadCpuNanos } from "../machine.js"
import { type Figure, figure } from "../report.js"
import type { PartResult } from "./part.js"

export const ALBUM = "6akEvsycLGftJxYudPjmqK"
const PATH = `/albums/${ALBUM}`
/** how many requests are in flight at once */
export const CONCURRENCY = 8
/** The SDK's default per-attempt timeout (`ServiceClientOptions.timeout`, "Per attempt (default 30 s)"). */
export const SDK_ATTEMPT_TIMEOUT = "30 seconds"

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

/** The same, each GET and its body read bounded by `Effect.timeout` at the SDK's default attempt timeout. */
export const boundedGets = (client: HttpClient.HttpClient.With<unknown>, count: number) =>
  Effect.forEach(
    Array.from({ length: count }, () => PATH),
    (path) =>
      Effect.timeout(
        Effect.flatMap(client.get(path), (response) => response.json),
        SDK_ATTEMPT_TIMEOUT
      ),
    { concurrency: CONCURRENCY, discard: true }
  )

type Sdk = typeof import("@service-sdk/effect")

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
  const albumsGets = (service: ServiceClientService) =>
    Effect.forEach(
      Array.from({ length: BATCH }, () => ALBUM),
      (id) => service.albums.get(id),
      { concurrency: CONCURRENCY, discard: true }
    )
  // the ablation: the same SDK build with the attempt run unbounded in the caller's fiber (information only)
  const ablation = await ablatedSdk<Sdk>(
    import.meta.resolve("@service-sdk/effect"),
    fileURLToPath(new URL("../../ablation/effect3.js", import.meta.url)),
    EFFECT3_UNBOUNDED
  )
  const unbounded =
    "module" in ablation
      ? await Effect.runPromise(
          ablation.module.ServiceClient.make({ apiUrl: context.emulator.apiUrl }).pipe(
            Effect.provideService(ablation.module.TokenProvider, provider),
            Effect.provideService(HttpClient.HttpClient, context.http)
          )
        )
      : undefined
  // main-thread CPU per task, beside the wall-clock figures (robust on a loaded machine)
  const keys = ["sdk", "raw", "bounded", "resource", "unboundedSdk", "unboundedResource"] as const
  type Key = (typeof keys)[number]
  const cpu = Object.fromEntries(keys.map((key) => [key, { ns: 0, ops: 0 }])) as Record<
    Key,
    { ns: number; ops: number }
  >
  const accounted = (key: Key, batch: Effect.Effect<void, unknown>) => async () => {
    const start = threadCpuNanos()
    await Effect.runPromise(batch)
    const end = threadCpuNanos()
    if (start !== undefined && end !== undefined) {
      cpu[key].ns += end - start
      cpu[key].ops += BATCH
    }
  }
  const task = (name: string, key: Key, batch: Effect.Effect<void, unknown>): Task => ({
    name,
    batch: BATCH,
    async: true,
    fn: accounted(key, batch)
  })
  // 11 interleaved rounds in a full run: one round's ratio moves ±15%; with 7, `http` moved 0.79-0.91× between runs
  const rounds = context.quick ? context.settings.rounds : Math.max(11, context.settings.rounds)
  const measured = await measure(
    [
      task("ServiceClient", "sdk", gets(client.http, BATCH)),
      task("raw", "raw", gets(raw, BATCH)),
      task("raw + Effect.timeout", "bounded", boundedGets(raw, BATCH)),
      task("albums.get", "resource", albumsGets(client)),
      ...(unbounded === undefined
        ? []
        : [
            task("ServiceClient, unbounded attempt", "unboundedSdk", gets(unbounded.http, BATCH)),
            task("albums.get, unbounded attempt", "unboundedResource", albumsGets(unbounded))
          ])
    ],
    { ...context.settings, rounds, time: context.settings.time * 2 }
  )
  const [sdk, base, bounded, resource, unboundedSdk, unboundedResource] = measured as [
    Measured,
    Measured,
    Measured,
    Measured,
    Measured | undefined,
    Measured | undefined
  ]
  // mean throughput over the interleaved rounds (a median of batch latencies would hide the GC tail)
  const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length
  const ops = (measured: Measured) => mean(measured.meanRounds.map((ns) => 1e9 / ns))
  const micros = (measured: Measured) => (1e6 / ops(measured)).toFixed(0)
  const cpuMicros = (key: Key) => cpu[key].ns / cpu[key].ops / 1000
  const cpuNote =
    cpu.raw.ops === 0
      ? "main-thread CPU per request: not available on this platform"
      : `main-thread CPU per request (Linux per-thread counters, warm-up included): raw ${cpuMicros("raw").toFixed(0)} µs, raw + Effect.timeout ${cpuMicros("bounded").toFixed(0)} µs, ServiceClient.http ${cpuMicros("sdk").toFixed(0)} µs (raw + Effect.timeout/http ${(cpuMicros("bounded") / cpuMicros("sdk")).toFixed(2)}, raw/http ${(cpuMicros("raw") / cpuMicros("sdk")).toFixed(2)}), albums.get ${cpuMicros("resource").toFixed(0)} µs (raw + Effect.timeout/albums.get ${(cpuMicros("bounded") / cpuMicros("resource")).toFixed(2)}, raw/albums.get ${(cpuMicros("raw") / cpuMicros("resource")).toFixed(2)})${cpu.unboundedSdk.ops === 0 ? "" : `; unbounded attempt: http ${cpuMicros("unboundedSdk").toFixed(0)} µs, albums.get ${cpuMicros("unboundedResource").toFixed(0)} µs`}`
  const like = {
    label: `raw HttpClient + fixed bearer + Effect.timeout(${SDK_ATTEMPT_TIMEOUT}) per request`,
    value: ops(bounded),
    unit: "ops/s"
  } as const
  const bare = { label: "raw HttpClient + fixed bearer header (no timeout)", value: ops(base), unit: "ops/s" } as const
  const figures: Array<Figure> = [
    figure(
      { label: "ServiceClient.http GET + JSON body vs raw + Effect.timeout", value: ops(sdk), unit: "ops/s" },
      {
        baseline: like,
        ratio: throughputRatioOf(sdk.meanRounds, bounded.meanRounds),
        target: { on: "ratio", op: ">=", limit: 1 }
      }
    ),
    figure(
      {
        label: "ServiceClient albums.get (schema-decoded) vs raw + Effect.timeout",
        value: ops(resource),
        unit: "ops/s"
      },
      {
        baseline: like,
        ratio: throughputRatioOf(resource.meanRounds, bounded.meanRounds),
        target: { on: "ratio", op: ">=", limit: 1 }
      }
    ),
    figure(
      { label: "ServiceClient.http GET + JSON body vs bare raw (information)", value: ops(sdk), unit: "ops/s" },
      { baseline: bare, ratio: throughputRatioOf(sdk.meanRounds, base.meanRounds) }
    ),
    figure(
      { label: "ServiceClient albums.get vs bare raw (information)", value: ops(resource), unit: "ops/s" },
      { baseline: bare, ratio: throughputRatioOf(resource.meanRounds, base.meanRounds) }
    ),
    figure(
      {
        label: "raw + Effect.timeout vs bare raw (what the timeout costs a raw client)",
        value: ops(bounded),
        unit: "ops/s"
      },
      { baseline: bare, ratio: throughputRatioOf(bounded.meanRounds, base.meanRounds) }
    )
  ]
  if (unboundedSdk !== undefined && unboundedResource !== undefined) {
    figures.push(
      figure(
        {
          label: "ablation, attempt unbounded: ServiceClient.http vs bare raw",
          value: ops(unboundedSdk),
          unit: "ops/s"
        },
        { baseline: bare, ratio: throughputRatioOf(unboundedSdk.meanRounds, base.meanRounds) }
      ),
      figure(
        { label: "ablation, attempt unbounded: albums.get vs bare raw", value: ops(unboundedResource), unit: "ops/s" },
        { baseline: bare, ratio: throughputRatioOf(unboundedResource.meanRounds, base.meanRounds) }
      )
    )
  }
  return {
    title: "Request overhead (authenticated GETs against the emulator)",
    figures,
    notes: [
      `GET /v1${PATH}; ${BATCH} requests per sample, ${CONCURRENCY} in flight, one undici pool for all; ratio = mean throughput (operations over total time, GC pauses included) over the baseline's, ${rounds} interleaved rounds (range of per-round ratios in brackets)`,
      `targets against the raw client with Effect.timeout(${SDK_ATTEMPT_TIMEOUT}) around each GET and its body read (the SDK's default attempt timeout: the SDK bounds each attempt, headers and body, by it); the bare-raw ratios are information`,
      cpuNote,
      `wall time per request, ${CONCURRENCY} in flight: raw ${micros(base)} µs, raw + Effect.timeout ${micros(bounded)} µs, ServiceClient.http ${micros(sdk)} µs, albums.get ${micros(resource)} µs${unboundedSdk === undefined || unboundedResource === undefined ? "" : `; unbounded attempt: http ${micros(unboundedSdk)} µs, albums.get ${micros(unboundedResource)} µs`}`,
      "missing" in ablation
        ? `ablation not measured: ${ablation.missing}`
        : "ablation (information, not shipped): the SDK's build bundled by the bench with client/attemptTimeout.js replaced by the attempt run in the caller's fiber, no bound; everything else the same build on the same effect",
      "the request path uses public APIs only: one forked fiber and a native timer per attempt on the live clock (Effect.timeoutFail on any other), no span when no tracer is installed, the body read within the attempt and decoded once, client.http responses re-made with HttpClientResponse.fromWeb on the request without the token"
    ],
    data: {
      cpu,
      serviceClient: sdk,
      raw: base,
      rawTimeout: bounded,
      albumsGet: resource,
      unboundedServiceClient: unboundedSdk,
      unboundedAlbumsGet: unboundedResource
    }
  }
}
