/**
 * Refresh tokens that expire (DESIGN section 4): the entry records the sign-in; refreshing does not extend it; a
 * warning in the last 7 days; an invalid_grant at the end says the sign-in ended and to sign in again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { TestClock } from "effect/testing"
import { AuthorizationCode, TokenCache } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { credentials, mock } from "../support/mock.js"

const DAY = 86_400

/**
 * Issues tokens of an hour; refresh tokens rotate; answers invalid_grant once `deadEnd` (s) has passed; with
 * `announce`, every answer says how long the refresh token has left (`refresh_token_expires_in`).
 */
const server = (deadEnd: number, announce = false) =>
  mock((request, call) =>
    Effect.map(
      Effect.clockWith((clock) => Effect.succeed(clock.currentTimeMillisUnsafe())),
      (now) =>
        request.form.get("grant_type") === "refresh_token" && now / 1000 >= deadEnd
          ? MockHttpClient.json({ error: "invalid_grant", error_description: "refresh token expired" }, 400)
          : MockHttpClient.json({
              access_token: `at-${call}`,
              token_type: "Bearer",
              expires_in: 3600,
              refresh_token: `rt-${call}`,
              ...(announce ? { refresh_token_expires_in: deadEnd - now / 1000 } : {})
            })
    )
  )

describe("the end of a sign-in", () => {
  it.effect("the code exchange records the sign-in and its end; refreshes keep them; the end is known", () =>
    Effect.gen(function* () {
      const cache = yield* TokenCache.memory()
      const provider = yield* AuthorizationCode.make({
        ...credentials,
        redirectUri: "http://127.0.0.1:9/cb",
        tokenCache: cache,
        refreshTokenLifetime: "180 days"
      })
      yield* TestClock.adjust("1000 seconds")
      yield* provider.exchangeCode("code", { codeVerifier: "v".repeat(43) })
      const end = yield* provider.signInEndsAt
      assert.strictEqual(Option.isSome(end) && end.value.getTime(), (1000 + 180 * DAY) * 1000)
      yield* TestClock.adjust("2 hours")
      yield* provider.getAccessToken
      const entry = yield* cache.get
      assert.strictEqual(Option.isSome(entry) && entry.value.signedInAt, 1000)
      assert.strictEqual(Option.isSome(entry) && entry.value.signInEndsAt, 1000 + 180 * DAY)
    }).pipe(Effect.provide(server(Number.POSITIVE_INFINITY)))
  )

  it.effect(
    "refresh_token_expires_in names the end; within 7 days each renewal warns; at the end: sign in again",
    () => {
      const lines: Array<string> = []
      const logger = Logger.make((options) => {
        lines.push(`${String(options.logLevel)} ${JSON.stringify(options.message)}`)
      })
      return Effect.gen(function* () {
        const provider = yield* AuthorizationCode.make({ ...credentials, redirectUri: "http://127.0.0.1:9/cb" })
        yield* provider.exchangeCode("code", { codeVerifier: "v".repeat(43) })
        assert.isTrue(Option.isSome(yield* provider.signInEndsAt))
        yield* TestClock.adjust(`${10 * DAY} seconds`)
        yield* provider.getAccessToken
        assert.isTrue(
          lines.some((line) => /warn.*the sign-in ends on .* sign in again before then/i.test(line)),
          lines.join("\n")
        )
        yield* TestClock.adjust(`${5 * DAY} seconds`)
        const error = yield* Effect.flip(provider.getAccessToken)
        assert.strictEqual(error._tag, "AuthenticationError")
        assert.match(error.message, /the sign-in ended on .*sign in again/)
      }).pipe(Effect.provide(Logger.layer([logger])), Effect.provide(server(15 * DAY, true)))
    }
  )
})
