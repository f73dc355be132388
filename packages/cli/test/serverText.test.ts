/**
 * Server-supplied text in the CLI's output: the one-line printer goes through the SDK's one cleaner, so the data API's
 * words are shown as safely as the token endpoint's.
 */
import { describe, expect, it } from "@effect/vitest"
import { cleanUntrustedText } from "@service-sdk/effect"
import { oneLine } from "../src/internal/terminal.js"

const INVISIBLE = ["\u200b", "\u2028", "\u2029", "\u200f", "\u061c", "\ufeff", "\u2060", "\u202e", "\u2066"]

describe("the CLI's one-line printer", () => {
  it("drops escape sequences whole and every control, bidi and invisible character", () => {
    const hostile = `a\u001b[2J\u001b]0;title\u0007b${INVISIBLE.join("")}c\r\nd\u009b31me`
    expect(oneLine(hostile)).toBe("abc de")
    for (const char of INVISIBLE) expect(oneLine(`x${char}y`)).toBe("xy")
  })

  it("is the SDK's cleaner (one place), on one line and capped", () => {
    const text = `name\u200b\u001b[31m red\ttab`
    expect(oneLine(text)).toBe(cleanUntrustedText("name\u200b\u001b[31m red tab", 4096))
    expect(oneLine("x".repeat(10_000)).length).toBe(4096)
  })
})
