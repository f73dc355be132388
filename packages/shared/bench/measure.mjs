// The side-by-side bench's measurements, one copy for both Effect lines (each passes its own Effect module and
// constructors). Figures: the cached path (ns per getAccessToken on a fresh token, and its ratio to a bare Ref.get +
// Clock), the herd (K concurrent callers on an empty cache: ms to serve them all, token requests made), and the
// request overhead (ns per ServiceClient.http GET + JSON on a mock HttpClient, and its ratio to the raw HttpClient
// with a fixed bearer header).

const nsPer = async (Effect, effect, iterations) => {
  // warm up, then time a loop inside one Effect (the per-call cost, not runPromise's)
  const loop = (n) =>
    Effect.suspend(() => {
      let i = 0
      const step = Effect.flatMap(effect, () => Effect.suspend(() => (++i < n ? step : Effect.void)))
      return step
    })
  await Effect.runPromise(loop(Math.min(iterations, 20_000)))
  const start = process.hrtime.bigint()
  await Effect.runPromise(loop(iterations))
  return Number(process.hrtime.bigint() - start) / iterations
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export const measure = async ({
  Effect,
  cachedBaseline,
  makeProvider,
  tokenRequests,
  rawRequest,
  makeClientRequest
}) => {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const cached = []
  const baseline = []
  const request = []
  const raw = []
  for (let round = 0; round < rounds; round++) {
    const provider = await makeProvider()
    await Effect.runPromise(provider.getAccessToken)
    baseline.push(await nsPer(Effect, cachedBaseline, 200_000))
    cached.push(await nsPer(Effect, provider.getAccessToken, 200_000))
    raw.push(await nsPer(Effect, rawRequest, 5_000))
    request.push(await nsPer(Effect, await makeClientRequest(), 5_000))
  }
  const herd = {}
  for (const k of [1_000, 10_000]) {
    const provider = await makeProvider()
    const before = tokenRequests()
    const start = process.hrtime.bigint()
    await Effect.runPromise(
      Effect.all(
        Array.from({ length: k }, () => provider.getAccessToken),
        { concurrency: "unbounded" }
      )
    )
    herd[k] = { ms: Number(process.hrtime.bigint() - start) / 1e6, tokenRequests: tokenRequests() - before }
  }
  return {
    node: process.version,
    cachedNs: median(cached),
    cachedBaselineNs: median(baseline),
    cachedRatio: median(cached.map((c, i) => baseline[i] / c)),
    requestNs: median(request),
    rawRequestNs: median(raw),
    requestRatio: median(request.map((r, i) => raw[i] / r)),
    herd
  }
}
