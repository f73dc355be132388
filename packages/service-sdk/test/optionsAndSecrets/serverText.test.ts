/**
 * Server-supplied text (DESIGN section 4): one cleaner for the token endpoint and the data API, so an API error
 * message is as safe to print as an `error_description`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { cleanUntrustedText, ServiceClient, TokenProvider } from "@service-sdk/effect"
import { MockHttpClient } from "@service-sdk/effect/testing"
import { clientCredentialsLayer } from "../fixtures.js"
import { clientLayer } from "../ServiceClient.helpers.js"

const INVISIBLE = ["\u200b", "\u2028", "\u2029", "\u200f", "\u061c", "\ufeff", "\u2060", "\u202e"]
const HOSTILE = `\u001b[2J\u001b]0;owned\u0007bad ${INVISIBLE.join("")}thing\r\n\u009b31m`

/** No control, format (bidi, zero-width), or separator character; no leftover of an escape sequence. */
const isClean = (text: string) => !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(text) && !text.includes("[2J")

describe("cleanUntrustedText", () => {
  it("removes escape sequences whole, control, bidi and invisible characters, then caps", () => {
    expect(cleanUntrustedText(HOSTILE)).toBe("bad thing")
    for (const char of INVISIBLE) expect(cleanUntrustedText(`a${char}b`)).toBe("ab")
    expect(cleanUntrustedText("x".repeat(2000))).toHaveLength(512)
    expect(cleanUntrustedText("😀".repeat(10), 5)).toBe("😀😀")
  })

  it.prop("whatever the input, the output is clean and within the cap", [fc.string({ unit: "binary" })], ([text]) => {
    const cleaned = cleanUntrustedText(text, 64)
    expect(isClean(cleaned)).toBe(true)
    expect(cleaned.length).toBeLessThanOrEqual(64)
  })
})

describe("the data API's error text", () => {
  it.effect("ApiError.message holds the API's words cleaned (no ESC sequence, no invisible character)", () =>
    Effect.gen(function* () {
      const client = yield* ServiceClient
      const error = yield* Effect.flip(client.users.me)
      expect(error._tag).toBe("ApiError")
      expect(error.message).toContain("bad thing")
      expect(isClean(error.message)).toBe(true)
    }).pipe(Effect.provide(clientLayer(() => MockHttpClient.json({ error: { status: 400, message: HOSTILE } }, 400))))
  )

  it.effect("the token endpoint's error_description is cleaned the same way", () =>
    Effect.gen(function* () {
      const provider = yield* TokenProvider
      const error = yield* Effect.flip(provider.getAccessToken)
      expect(error.message).toContain("bad thing")
      expect(isClean(error.message)).toBe(true)
    }).pipe(
      Effect.provide(
        clientCredentialsLayer(() => MockHttpClient.json({ error: "invalid_client", error_description: HOSTILE }, 401))
      )
    )
  )
})
