import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, Schema } from "effect"
import { TokenCache, TokenInfo } from "@service-sdk/effect"
import * as util from "node:util"
import { tokenInfo } from "../fixtures.js"

const full = tokenInfo("access-AAAA", 1_700_000_000.25, {
  refreshToken: "refresh-RRRR",
  scope: "user-read-private user-read-email"
})

describe("TokenInfo", () => {
  it("is a Schema.Class whose tokens are Redacted", () => {
    expect(full).toBeInstanceOf(TokenInfo)
    expect(Redacted.isRedacted(full.accessToken)).toBe(true)
    expect(Redacted.isRedacted(full.refreshToken)).toBe(true)
    expect(Redacted.value(full.accessToken)).toBe("access-AAAA")
    expect(Redacted.value(full.refreshToken!)).toBe("refresh-RRRR")
    expect(full.expiresAt).toBe(1_700_000_000.25)
    expect(full.scope).toBe("user-read-private user-read-email")
    expect(Schema.is(TokenInfo)(full)).toBe(true)
  })

  it("the two trailing fields are optional", () => {
    const minimal = new TokenInfo({ accessToken: Redacted.make("a"), expiresAt: 10 })
    expect(minimal.refreshToken).toBeUndefined()
    expect(minimal.scope).toBeUndefined()
  })

  it("the constructor validates its fields", () => {
    expect(() => new TokenInfo({ accessToken: Redacted.make("a"), expiresAt: "soon" as unknown as number })).toThrow()
    expect(
      () => new TokenInfo({ accessToken: "plain" as unknown as Redacted.Redacted<string>, expiresAt: 1 })
    ).toThrow()
  })

  it("printing a TokenInfo shows no token", () => {
    for (const text of [String(full), util.inspect(full, { depth: 10 }), JSON.stringify(full)]) {
      expect(text).not.toContain("access-AAAA")
      expect(text).not.toContain("refresh-RRRR")
    }
  })

  it("encodes to the plain JSON {access_token, expires_at, refresh_token, scope}", () => {
    expect(JSON.parse(TokenCache.encodeJson(full))).toEqual({
      access_token: "access-AAAA",
      expires_at: 1_700_000_000.25,
      refresh_token: "refresh-RRRR",
      scope: "user-read-private user-read-email"
    })
    expect(JSON.parse(TokenCache.encodeJson(tokenInfo("a", 5)))).toEqual({ access_token: "a", expires_at: 5 })
  })

  it("round-trips through encodeJson/decodeJson", () => {
    for (const original of [full, tokenInfo("only-access", 42), tokenInfo("with-scope", 42.5, { scope: "a b" })]) {
      const decoded = TokenCache.decodeJson(TokenCache.encodeJson(original))
      expect(Option.isSome(decoded)).toBe(true)
      const token = Option.getOrThrow(decoded)
      expect(token).toBeInstanceOf(TokenInfo)
      expect(Redacted.value(token.accessToken)).toBe(Redacted.value(original.accessToken))
      expect(token.expiresAt).toBe(original.expiresAt)
      expect(token.refreshToken && Redacted.value(token.refreshToken)).toBe(
        original.refreshToken && Redacted.value(original.refreshToken)
      )
      expect(token.scope).toBe(original.scope)
    }
  })

  it.effect("the Schema itself decodes the JSON form", () =>
    Effect.gen(function* () {
      const token = yield* Schema.decodeUnknown(TokenInfo)({ access_token: "x", expires_at: 7, refresh_token: "r" })
      expect(Redacted.value(token.accessToken)).toBe("x")
      expect(Redacted.value(token.refreshToken!)).toBe("r")
      const encoded = yield* Schema.encode(TokenInfo)(token)
      expect(encoded.access_token).toBe("x")
      expect(encoded.expires_at).toBe(7)
    })
  )

  it("decodeJson reads anything but a valid entry as none", () => {
    for (const text of [
      "",
      "{",
      "not json",
      "null",
      "42",
      '"token"',
      "[]",
      "{}",
      '{"access_token":"x"}',
      '{"expires_at":1}',
      '{"access_token":5,"expires_at":1}',
      '{"access_token":"x","expires_at":"1"}',
      '{"accessToken":"x","expiresAt":1}'
    ]) {
      expect(Option.isNone(TokenCache.decodeJson(text)), text).toBe(true)
    }
  })

  it("decodeJson reads ill-typed optional fields as absent", () => {
    for (const text of [
      '{"access_token":"x","expires_at":1,"refresh_token":5,"scope":["a"]}',
      '{"access_token":"x","expires_at":1,"refresh_token":null,"scope":null}',
      '{"access_token":"x","expires_at":1,"refresh_token":"","scope":{}}'
    ]) {
      const token = Option.getOrThrow(TokenCache.decodeJson(text))
      expect(Redacted.value(token.accessToken)).toBe("x")
      expect(token.refreshToken).toBeUndefined()
      expect(token.scope).toBeUndefined()
    }
  })
})
