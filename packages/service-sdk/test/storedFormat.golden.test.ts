/**
 * The stored token format, pinned by the golden files both Effect lines test against (packages/shared/fixtures): a
 * fleet may mix processes of the Effect 3 and Effect 4 lines on one token file or one Redis.
 */
import * as Redacted from "effect/Redacted"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { TokenCache, TokenInfo } from "../src/index.js"

const fixtures = join(import.meta.dirname, "..", "..", "shared", "fixtures")
const golden = (name: string) => readFileSync(join(fixtures, name), "utf8")

describe("the stored token format (golden files, shared with the Effect 4 line)", () => {
  it("encodes every field in the pinned order and text", () => {
    const full = new TokenInfo({
      accessToken: Redacted.make("access-token-value"),
      expiresAt: 1767225600.5,
      refreshToken: Redacted.make("refresh-token-value"),
      scope: "user-read-private user-library-read",
      clientId: "emulator-client",
      authUrl: "http://127.0.0.1:8080",
      issuedAt: 1767222000.5,
      refreshRejected: true,
      signedInAt: 1767200000,
      signInEndsAt: 1782752000
    })
    expect(TokenCache.encodeJson(full)).toBe(golden("stored-token.full.golden"))
    const minimal = new TokenInfo({ accessToken: Redacted.make("access-token-value"), expiresAt: 1767225600 })
    expect(TokenCache.encodeJson(minimal)).toBe(golden("stored-token.minimal.golden"))
  })

  it("decodes the golden text back to the same fields", () => {
    const decoded = TokenCache.decodeJson(golden("stored-token.full.golden"))
    expect(decoded._tag).toBe("Some")
    if (decoded._tag !== "Some") return
    expect(Redacted.value(decoded.value.accessToken)).toBe("access-token-value")
    expect(Redacted.value(decoded.value.refreshToken!)).toBe("refresh-token-value")
    expect([
      decoded.value.expiresAt,
      decoded.value.clientId,
      decoded.value.issuedAt,
      decoded.value.refreshRejected
    ]).toEqual([1767225600.5, "emulator-client", 1767222000.5, true])
  })

  // one table for both lines (the Effect 4 suite reads it too): a hand-edited, older or damaged entry reads the same
  const lenient: ReadonlyArray<{ why: string; text: string; reads: Record<string, unknown> | null }> = JSON.parse(
    golden("stored-token.lenient.json")
  )
  it.each(lenient.map((entry) => [entry.why, entry] as const))("reads leniently: %s", (_, entry) => {
    const decoded = TokenCache.decodeJson(entry.text)
    expect(decoded._tag === "Some" ? JSON.parse(TokenCache.encodeJson(decoded.value)) : null).toEqual(entry.reads)
  })
})
