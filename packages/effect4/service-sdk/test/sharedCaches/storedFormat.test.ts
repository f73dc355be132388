/** The stored token format, pinned by the golden files both lines test against (packages/shared/fixtures). */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import { decodeText, encodeText } from "../../src/TokenInfo.js"

const fixtures = join(import.meta.dirname, "..", "..", "..", "..", "shared", "fixtures")
const golden = (name: string) => readFileSync(join(fixtures, name), "utf8")

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
const minimal = new TokenInfo({ accessToken: Redacted.make("access-token-value"), expiresAt: 1767225600 })

describe("the stored token format (golden files, shared with the Effect 3 line)", () => {
  it("encodes every field in the pinned order and text", () => {
    assert.strictEqual(encodeText(full), golden("stored-token.full.golden"))
    assert.strictEqual(encodeText(minimal), golden("stored-token.minimal.golden"))
  })

  it("decodes the golden text back to the same token", () => {
    const decoded = decodeText(golden("stored-token.full.golden"))!
    assert.strictEqual(Redacted.value(decoded.accessToken), "access-token-value")
    assert.strictEqual(Redacted.value(decoded.refreshToken!), "refresh-token-value")
    assert.deepStrictEqual(
      [decoded.expiresAt, decoded.scope, decoded.clientId, decoded.authUrl, decoded.issuedAt, decoded.refreshRejected],
      [
        1767225600.5,
        "user-read-private user-library-read",
        "emulator-client",
        "http://127.0.0.1:8080",
        1767222000.5,
        true
      ]
    )
  })

  it("reads leniently: ill-typed optional fields as absent, anything without access_token/expires_at as none", () => {
    const decoded = decodeText(
      '{"access_token":"a","expires_at":1,"refresh_token":5,"scope":null,"refresh_rejected":"yes"}'
    )!
    assert.strictEqual(decoded.refreshToken, undefined)
    assert.strictEqual(decoded.scope, undefined)
    assert.strictEqual(decoded.refreshRejected, undefined)
    assert.strictEqual(decodeText('{"expires_at":1}'), undefined)
    assert.strictEqual(decodeText("not json"), undefined)
  })

  it.effect(
    "TokenCache.file writes exactly the golden bytes (and its revision) and reads a file the Effect 3 line wrote",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "e4-golden-"))
        const cache = yield* TokenCache.file(join(dir, "token.json"))
        yield* cache.set(full)
        // the file protocol of both lines adds a fresh `revision` to every write (docs/decisions.md 28.1); readers ignore it
        const text = readFileSync(join(dir, "token.json"), "utf8")
        assert.match(text, /,"revision":"[0-9a-f]{24}"}$/)
        assert.strictEqual(text.replace(/,"revision":"[0-9a-f]{24}"}$/, "}"), golden("stored-token.full.golden"))
        writeFileSync(join(dir, "other.json"), golden("stored-token.minimal.golden"))
        const read = yield* (yield* TokenCache.file(join(dir, "other.json"))).get
        assert.isTrue(Option.isSome(read))
        assert.strictEqual(Option.isSome(read) && read.value.expiresAt, 1767225600)
      })
  )

  // one table for both lines (the Effect 3 suite reads it too): a hand-edited, older or damaged entry reads the same
  const lenient: ReadonlyArray<{ why: string; text: string; reads: Record<string, unknown> | null }> = JSON.parse(
    golden("stored-token.lenient.json")
  )
  it.each(lenient.map((entry) => [entry.why, entry] as const))("reads leniently: %s", (_, entry) => {
    const decoded = decodeText(entry.text)
    assert.deepStrictEqual(decoded === undefined ? null : JSON.parse(encodeText(decoded)), entry.reads)
  })
})
