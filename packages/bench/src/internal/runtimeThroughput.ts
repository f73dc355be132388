/**
 * Run by Node, Bun or Deno (part 12, the runtimes row): the cached `await getAccessToken()` of `@service-sdk/promise`
 * on that runtime. Arguments: the package's built entry, the provider's options (JSON), calls per sample, samples.
 * One warm-up sample, then the samples; prints one JSON line, `{ "callsPerSecond": [...] }`, never a token. Plain
 * code with no import (it runs as built, on every runtime).
 */
export {}

const [entry, options, callsArgument, samplesArgument] = process.argv.slice(2)
const calls = Number(callsArgument)
const samples = Number(samplesArgument)
const { AsyncClientCredentials } = (await import(entry!)) as {
  readonly AsyncClientCredentials: new (
    options: object
  ) => { readonly getAccessToken: () => Promise<string>; readonly close: () => Promise<void> }
}
const auth = new AsyncClientCredentials(JSON.parse(options!))
try {
  await auth.getAccessToken()
  const callsPerSecond: Array<number> = []
  for (let sample = -1; sample < samples; sample++) {
    const start = performance.now()
    for (let i = 0; i < calls; i++) await auth.getAccessToken()
    const seconds = (performance.now() - start) / 1000
    if (sample >= 0) callsPerSecond.push(Math.round(calls / seconds))
  }
  console.log(JSON.stringify({ callsPerSecond }))
} finally {
  await auth.close()
}
