/**
 * Part 6. Peers on the same work: cached throughput (against the SDK's facade, interleaved) and a herd of K
 * concurrent callers on a cold instance (token requests, and wall time over the same peer's one cold call).
 */
import { type Context, makeAsyncProvider, repeatAsync } from "../context.js"
import { median, measure, ratioOf, timed } from "../harness.js"
import {
  googleAuth,
  googleAuthPeer,
  NaiveTokenCache,
  obtainRefreshToken,
  type Peer,
  redirectSpotifyAccounts,
  SimpleOAuth2Wrapper,
  spotify
} from "../peers.js"
import { type Figure, figure } from "../report.js"
import type { PartResult } from "./part.js"
import { wallClockMillis } from "../machine.js"

const N = 1_000

interface Contender {
  readonly name: string
  /** a new instance with nothing cached, and how to release it */
  readonly make: () => { readonly peer: Peer; readonly close: () => Promise<void> }
}

export const peers = async (context: Context): Promise<PartResult> => {
  const { emulator } = context
  const refreshToken = await obtainRefreshToken(emulator)
  const restoreFetch = redirectSpotifyAccounts(emulator)
  const none = async () => {}
  const contenders: ReadonlyArray<Contender> = [
    {
      name: "service-sdk AsyncClientCredentials",
      make: () => {
        const provider = makeAsyncProvider(context)
        return { peer: { get: () => provider.getAccessToken() }, close: () => provider.close() }
      }
    },
    {
      name: "google-auth-library OAuth2Client",
      make: () => {
        const google = googleAuth(emulator, { refresh_token: refreshToken })
        google.setCredentials(wallClockMillis() - 1000)
        return { peer: googleAuthPeer(google.client), close: none }
      }
    },
    {
      name: "@spotify/web-api-ts-sdk ClientCredentialsStrategy",
      make: () => ({ peer: spotify(emulator), close: none })
    },
    { name: "simple-oauth2 + wrapper", make: () => ({ peer: new SimpleOAuth2Wrapper(emulator), close: none }) },
    { name: "naive class", make: () => ({ peer: new NaiveTokenCache(emulator), close: none }) }
  ]
  const { peerHerd: k, peerHerdRounds: rounds } = context.sizes
  try {
    // cached throughput, all in one interleaved measurement
    const warm = contenders.map((contender) => contender.make())
    for (const { peer } of warm) await peer.get()
    const cached = await measure(
      contenders.map((contender, index) => ({
        name: contender.name,
        batch: N,
        async: true,
        fn: () => repeatAsync(() => warm[index]!.peer.get(), N)
      })),
      context.settings
    )
    await Promise.all(warm.map(({ close }) => close()))

    // the herd, one contender after the other
    const herds: Array<{ herd: Array<number>; cold: Array<number>; requests: Array<number> }> = []
    for (const contender of contenders) {
      context.log(`  herd: ${contender.name}`)
      const herd: Array<number> = []
      const cold: Array<number> = []
      const requests: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const many = contender.make()
        const one = contender.make()
        try {
          const before = await emulator.tokenRequests()
          const { ms } = await timed(() => Promise.all(Array.from({ length: k }, () => many.peer.get())))
          requests.push((await emulator.tokenRequests()) - before)
          herd.push(ms)
          cold.push((await timed(() => one.peer.get())).ms)
        } finally {
          await Promise.all([many.close(), one.close()])
        }
      }
      herds.push({ herd, cold, requests })
    }

    const sdk = cached[0]!
    const ops = (nsPerOp: number) => 1e9 / nsPerOp
    const figures: Array<Figure> = contenders.flatMap((contender, index) => {
      const mine = cached[index]!
      const { cold, herd, requests } = herds[index]!
      return [
        figure(
          { label: `${contender.name}: cached`, value: ops(mine.nsPerOp), unit: "ops/s" },
          {
            baseline: { label: "service-sdk facade", value: ops(sdk.nsPerOp), unit: "ops/s" },
            ratio: ratioOf(sdk.rounds, mine.rounds)
          }
        ),
        figure(
          {
            label: `${contender.name}: herd K = ${k.toLocaleString("en-US")}, token requests`,
            value: Math.max(...requests),
            unit: "requests"
          },
          {}
        ),
        figure(
          {
            label: `${contender.name}: herd K = ${k.toLocaleString("en-US")}, wall time`,
            value: median(herd),
            unit: "ms"
          },
          { baseline: { label: "its one cold call", value: median(cold), unit: "ms" }, ratio: ratioOf(herd, cold) }
        )
      ]
    })
    return {
      title: "Peers on the same work",
      figures,
      notes: [
        `cached: ${N} sequential awaits per sample, ${context.settings.rounds} interleaved rounds; ratio = throughput over the service-sdk facade's`,
        `herd: ${rounds} round(s) of K = ${k} concurrent calls on a fresh instance; token requests are the most any round made`,
        "google-auth-library renews with a refresh token (authorization code grant); the others use client credentials",
        "@spotify/web-api-ts-sdk asks a fixed accounts URL: globalThis.fetch is wrapped to send it to the emulator"
      ],
      data: contenders.map((contender, index) => ({ name: contender.name, cached: cached[index], ...herds[index] }))
    }
  } finally {
    restoreFetch()
  }
}
