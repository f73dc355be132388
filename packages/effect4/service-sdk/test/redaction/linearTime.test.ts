/**
 * Masking and cleaning run in linear time (DESIGN section 9, "Callback and redirect"; issue 42 item 7): a constructor
 * given a 100k-character redirect URI took 34 s (`maskUrlCredentials` was quadratic). The assertion is about growth,
 * not about the clock: ten times the input may take at most 40 times as long (linear: about 10; quadratic: about 100),
 * each size timed as the best of a few runs, so a busy machine does not decide the outcome.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { OAuthClient } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"

const base = { clientId: "client-id", clientSecret: "client-secret", authUrl: "http://127.0.0.1:4010" }
const SMALL = 10_000
const LARGE = 100_000
const MAX_GROWTH = 40

/** The best of `runs` timings of `effect` (ms). */
const best = async (effect: () => Effect.Effect<unknown, unknown>, runs = 5): Promise<number> => {
  let fastest = Number.POSITIVE_INFINITY
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await Effect.runPromise(Effect.exit(effect()))
    fastest = Math.min(fastest, performance.now() - start)
  }
  return fastest
}

/**
 * How much longer `LARGE` characters take than `SMALL` (after a warm-up): the least of up to three measurements, so
 * that one disturbed by the machine's load (a pause in the large run) is measured again; a quadratic cost grows by
 * about 100 in every one of them.
 */
const growth = async (of: (n: number) => Effect.Effect<unknown, unknown>) => {
  await best(() => of(SMALL), 2)
  let least = { ratio: Number.POSITIVE_INFINITY, small: 0, large: 0 }
  for (let attempt = 0; attempt < 3 && least.ratio >= MAX_GROWTH; attempt++) {
    const small = await best(() => of(SMALL))
    const large = await best(() => of(LARGE))
    // a floor for the small timing: below a tenth of a millisecond the timer's resolution is what is measured
    const ratio = large / Math.max(small, 0.1)
    if (ratio < least.ratio) least = { ratio, small, large }
  }
  return least
}

const make = (options: OAuthClient.Options) =>
  OAuthClient.make({ ...base, ...options }).pipe(Effect.provide(MockHttpClient.layer(() => ({ status: 500 }))))

describe("masking and cleaning take time linear in the text", () => {
  it("a long redirect URI: accepted, or refused with its message masked", { timeout: 120_000 }, async () => {
    const accepted = await growth((n) => make({ redirectUri: `http://127.0.0.1/${"a".repeat(n)}` }))
    expect(accepted.ratio, JSON.stringify(accepted)).toBeLessThan(MAX_GROWTH)
    const refused = await growth((n) => Effect.flip(make({ redirectUri: `http://localhost/${"a".repeat(n)}` })))
    expect(refused.ratio, JSON.stringify(refused)).toBeLessThan(MAX_GROWTH)
    const error = await Effect.runPromise(Effect.flip(make({ redirectUri: `http://localhost/${"a".repeat(LARGE)}` })))
    expect(error._tag).toBe("ConfigurationError")
  })

  it("a long malformed URL: its message, credentials masked", { timeout: 120_000 }, async () => {
    const malformed = await growth((n) => Effect.flip(make({ authUrl: `http://u:p@[${"a".repeat(n)}` })))
    expect(malformed.ratio, JSON.stringify(malformed)).toBeLessThan(MAX_GROWTH)
    const error = await Effect.runPromise(Effect.flip(make({ authUrl: `http://u:secret-pw@[${"a".repeat(10)}` })))
    expect(error.message).toContain("authUrl is not a valid URL")
    expect(error.message).not.toContain("secret-pw")
  })

  it("a long error_description from the token endpoint is cleaned and capped", { timeout: 120_000 }, async () => {
    const answer = (n: number) =>
      MockHttpClient.json(
        { error: "invalid_request", error_description: `\u001b]0;${"a\u202e".repeat(n / 2)}\u001b[2J${"b".repeat(n)}` },
        400
      )
    const refusal = (n: number) =>
      Effect.flip(
        Effect.flatMap(OAuthClient.make(base), (oauth) => oauth.clientCredentials()).pipe(
          Effect.provide(MockHttpClient.layer(() => answer(n)))
        )
      )
    const cleaned = await growth(refusal)
    expect(cleaned.ratio, JSON.stringify(cleaned)).toBeLessThan(MAX_GROWTH)
    const error = await Effect.runPromise(refusal(LARGE))
    expect(error.message.length).toBeLessThan(1000)
    expect(error.message.includes("\u001b") || error.message.includes("\u202e")).toBe(false)
  })
})
