/**
 * `service-sdk demo`: the whole story against an embedded emulator, with readable output and a summary table.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Emulator } from "@service-sdk/effect/testing"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import {
  AuthorizationCode,
  authorizeLocal,
  ClientCredentials,
  maskToken,
  ServiceClient,
  TokenProvider
} from "@service-sdk/effect"
import { seconds, table } from "./format.js"
import { freeLoopbackPort, visit } from "./loopback.js"

interface Row {
  readonly step: string
  readonly label: string
  readonly outcome: string
  readonly tokenRequests: number
  readonly apiRequests: number
  readonly millis: number
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

const ALBUM_ID = "6akEvsycLGftJxYudPjmqK"
const HERD = 1_000
/** The short-lived tokens of the expiry steps, and the skew that suits them (the default 30 s suits hour-long ones). */
const SHORT_LIFETIME_S = 2
const DEMO_SKEW_S = 1

export const demo = Effect.gen(function* () {
  // the Service's refresh tokens end 180 days after sign-in (docs/service-rules.md): the emulator says so too
  const emulator = yield* Emulator.make({ autoApprove: true, refreshTokenLifetime: 180 * 86_400 })
  const rows = yield* Ref.make<ReadonlyArray<Row>>([])
  yield* Console.log(`service-sdk demo — embedded emulator at ${emulator.authUrl} (data API ${emulator.apiUrl})`)

  /** Runs one chapter of the story: prints its title, times it, and counts the requests the emulator saw. */
  /** A step: its title, one line on what the demo sets for it and why, then what happened, counted. */
  const step = <A, E, R>(
    label: string,
    title: string,
    sets: string,
    effect: Effect.Effect<A, E, R>,
    outcome: (a: A) => string
  ) =>
    Effect.gen(function* () {
      yield* Console.log(`\n▶ ${title}`)
      yield* Console.log(`  sets: ${sets}`)
      const before = yield* emulator.stats
      const start = yield* Clock.currentTimeMillis
      const result = yield* effect
      const millis = (yield* Clock.currentTimeMillis) - start
      const after = yield* emulator.stats
      const row: Row = {
        step: title,
        label,
        outcome: outcome(result),
        tokenRequests: after.tokenRequests.total - before.tokenRequests.total,
        apiRequests: after.apiRequests.total - before.apiRequests.total,
        millis
      }
      yield* Console.log(
        `  ✓ ${row.outcome} (${count(row.tokenRequests, "token request")}, ${count(row.apiRequests, "API request")}, ${seconds(millis)})`
      )
      yield* Ref.update(rows, (all) => [...all, row])
      return result
    })

  const credentials = { clientId: emulator.clientId, clientSecret: emulator.clientSecret, authUrl: emulator.authUrl }
  const http = NodeHttpClient.layerUndici

  // 1. App-only: client credentials
  const appLayer = ServiceClient.layer({ apiUrl: emulator.apiUrl }).pipe(
    Layer.provideMerge(ClientCredentials.layer(credentials)),
    Layer.provide(http)
  )
  yield* step(
    "client credentials",
    "Client credentials: app token, then an album",
    "nothing: the emulator's default client and its default token lifetime (3600 s)",
    Effect.gen(function* () {
      const token = yield* (yield* TokenProvider).getAccessToken
      yield* Console.log(`  app token ${maskToken(Redacted.value(token))}`)
      const album = yield* (yield* ServiceClient).albums.get(ALBUM_ID)
      yield* Console.log(`  album: “${album.name}” by ${album.artists.map((artist) => artist.name).join(", ")}`)
      return album
    }).pipe(Effect.provide(appLayer)),
    (album) => `album “${album.name}” with an app token`
  )

  // 2. User-scoped: authorization code through the loopback redirect helper
  const port = yield* freeLoopbackPort
  const userLayer = ServiceClient.layer({ apiUrl: emulator.apiUrl }).pipe(
    Layer.provideMerge(
      AuthorizationCode.layer({
        ...credentials,
        redirectUri: `http://127.0.0.1:${port}/callback`,
        scope: ["user-read-private", "user-read-email", "user-library-read"],
        skew: `${DEMO_SKEW_S} seconds`
      })
    ),
    Layer.provide(http)
  )

  yield* Effect.gen(function* () {
    const client = yield* ServiceClient
    const provider = yield* TokenProvider

    yield* step(
      "authorization code",
      "Authorization code: consent (auto-approved) → loopback redirect → tokens",
      "the emulator approves consent at once (autoApprove: no browser in a demo); the redirect goes to a free loopback port",
      authorizeLocal({
        openBrowser: false,
        onAuthorizationUrl: (url) =>
          Console.log(`  consent page: ${url.slice(0, 72)}…`).pipe(Effect.zipRight(Effect.forkDaemon(visit(url))))
      }),
      (token) =>
        `user token ${maskToken(Redacted.value(token.accessToken))} + refresh token ${
          token.refreshToken ? maskToken(Redacted.value(token.refreshToken)) : "none"
        }`
    )

    yield* step(
      "profile + saved tracks",
      "The user's profile and saved tracks",
      "nothing new: two API calls with the user token from the step above",
      Effect.gen(function* () {
        const me = yield* client.users.me
        const saved = yield* client.library.savedTracks({ limit: 3 })
        const endsAt = yield* (yield* AuthorizationCode).signInEndsAt
        yield* Console.log(`  signed in as ${me.display_name} (${me.id})`)
        if (Option.isSome(endsAt)) {
          yield* Console.log(
            `  sign-in ends ${endsAt.value.toISOString().slice(0, 10)} (180 days after sign-in; refreshing does not extend it)`
          )
        }
        // a local file has no id (the Service sends null): shown by name
        for (const item of saved.items) {
          yield* Console.log(`  ♪ ${item.track.name}${item.track.id === null ? " (local file)" : ""}`)
        }
        return { me, total: saved.total }
      }),
      ({ me, total }) => `${me.display_name} has ${total} saved tracks`
    )

    // set-up for the next step (not counted in its row): tokens that live 2 s, and a fresh one
    yield* emulator.configure({ tokenLifetime: 2 })
    const short = yield* provider.forceRefresh(yield* provider.getAccessToken)
    yield* step(
      "expiry → refresh",
      "A 2-second token expires and is renewed transparently",
      `token lifetime ${SHORT_LIFETIME_S} s (to see an expiry in seconds, not an hour) and skew ${DEMO_SKEW_S} s (renew ${DEMO_SKEW_S} s before expiry; the default is 30 s, for hour-long tokens); waits 1.5 s, past the renewal point`,
      Effect.gen(function* () {
        yield* Console.log(`  token ${maskToken(Redacted.value(short))} issued; waiting 1.5 s, then one API call…`)
        yield* Effect.sleep("1500 millis")
        const me = yield* client.users.me
        const renewed = yield* provider.getAccessToken
        return { me, renewed: Redacted.value(renewed) !== Redacted.value(short) }
      }),
      ({ renewed }) => (renewed ? "renewed by one refresh; the call just worked" : "token was not renewed (unexpected)")
    )

    yield* step(
      "thundering herd",
      `${HERD.toLocaleString("en")} concurrent getAccessToken calls on an expired token`,
      `waits 1.2 s so that the 2 s token renewed above is past its renewal point (${SHORT_LIFETIME_S} s − ${DEMO_SKEW_S} s skew), then ${HERD.toLocaleString("en")} callers at once`,
      Effect.gen(function* () {
        yield* Effect.sleep("1200 millis")
        const tokens = yield* Effect.all(
          Array.from({ length: HERD }, () => provider.getAccessToken),
          { concurrency: "unbounded" }
        )
        return new Set(tokens.map(Redacted.value)).size
      }),
      (distinct) => `${HERD.toLocaleString("en")} callers, ${distinct === 1 ? "one token" : `${distinct} tokens`}`
    )

    // set-up for the next step (not counted in its row): hour-long tokens again, and a fresh one to revoke
    yield* emulator.configure({ tokenLifetime: 3600 })
    const current = yield* provider.forceRefresh(yield* provider.getAccessToken)
    yield* step(
      "401 → forced refresh",
      "A revoked token: 401, one forced refresh, retried",
      "token lifetime back to 3600 s; the current token revoked at the emulator, as a server would after a password change",
      Effect.gen(function* () {
        yield* emulator.revoke(Redacted.value(current))
        yield* Console.log(`  revoked ${maskToken(Redacted.value(current))} at the emulator`)
        return yield* client.users.me
      }),
      (me) => `recovered: still ${me.display_name}`
    )

    yield* step(
      "503 storm",
      "A 503 storm (3 failures) ridden out by retries",
      "the emulator answers the next 3 API requests with 503; the client retries with backoff (0.5 s × 2^attempt, jittered)",
      Effect.gen(function* () {
        yield* emulator.injectFault({ target: "api", count: 3, status: 503 })
        return yield* client.albums.get(ALBUM_ID)
      }),
      (album) => `album “${album.name}” after backing off`
    )
  }).pipe(Effect.provide(userLayer))

  // 3. A distributed CLI or desktop app keeps no secret: a public client, PKCE only (RFC 8252, RFC 9700)
  const publicPort = yield* freeLoopbackPort
  const publicLayer = ServiceClient.layer({ apiUrl: emulator.apiUrl }).pipe(
    Layer.provideMerge(
      AuthorizationCode.layer({
        clientId: emulator.publicClientId,
        publicClient: true,
        authUrl: emulator.authUrl,
        redirectUri: `http://127.0.0.1:${publicPort}/callback`,
        scope: ["user-read-private"]
      })
    ),
    Layer.provide(http)
  )
  yield* step(
    "public client + PKCE",
    "Public client with PKCE: no secret anywhere",
    `client ${emulator.publicClientId}, which has no secret: PKCE (S256) is its only proof; one sign-in, one refresh`,
    Effect.gen(function* () {
      const token = yield* authorizeLocal({
        openBrowser: false,
        onAuthorizationUrl: (url) =>
          Console.log(
            `  ${emulator.publicClientId}: code_challenge_method=${new URL(url).searchParams.get("code_challenge_method")}, no client secret`
          ).pipe(Effect.zipRight(Effect.forkDaemon(visit(url))))
      })
      const me = yield* (yield* ServiceClient).users.me
      const refreshed = yield* (yield* TokenProvider).forceRefresh(token.accessToken)
      yield* Console.log(`  refreshed as a public client: ${maskToken(Redacted.value(refreshed))}`)
      return me
    }).pipe(Effect.provide(publicLayer)),
    (me) => `${me.display_name} signed in (PKCE) and refreshed, no secret`
  )

  const all = yield* Ref.get(rows)
  const stats = yield* emulator.stats
  yield* Console.log(
    `\nSummary\n${table(
      ["step", "outcome", "token req.", "API req.", "time"],
      all.map((row) => [
        row.label,
        row.outcome,
        String(row.tokenRequests),
        String(row.apiRequests),
        seconds(row.millis)
      ])
    )}`
  )
  const counted = all.reduce((sum, row) => sum + row.tokenRequests, 0)
  const countedApi = all.reduce((sum, row) => sum + row.apiRequests, 0)
  yield* Console.log(
    `\nThe emulator saw ${stats.tokenRequests.total} token requests (${stats.tokenRequests.client_credentials} client_credentials, ${stats.tokenRequests.authorization_code} authorization_code, ${stats.tokenRequests.refresh_token} refresh_token) and ${stats.apiRequests.total} API requests: the rows above (${counted} and ${countedApi}) plus ${stats.tokenRequests.total - counted} token requests that set steps up (a fresh 2 s token, a fresh 3600 s token). Tokens are shown masked.`
  )
  const herd = all.find((row) => row.label === "thundering herd")
  if (herd !== undefined && herd.tokenRequests !== 1) {
    return yield* Effect.dieMessage(`the herd made ${herd.tokenRequests} token requests instead of 1`)
  }
  return Option.none()
}).pipe(Effect.scoped)
