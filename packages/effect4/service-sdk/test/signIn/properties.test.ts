/** Properties of URL building and callback parsing (it.prop): whatever the values, they round-trip. */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AuthorizationCode, OAuthClient, Pkce } from "@service-sdk/effect"
import { credentials, issuing, mock } from "../support/mock.js"

/** URLs carry well-formed Unicode only (a lone surrogate becomes U+FFFD in any URL): the properties are about those. */
const wellFormed = (...values: ReadonlyArray<string>) => {
  try {
    for (const value of values) encodeURIComponent(value)
    return true
  } catch {
    return false
  }
}

describe("properties", () => {
  it.effect.prop(
    "authorizationUrl carries any state and scope exactly, once",
    [Schema.String, Schema.String],
    ([state, scope]) =>
      Effect.gen(function* () {
        if (!wellFormed(state, scope)) return
        const oauth = yield* OAuthClient.make({ ...credentials, redirectUri: "http://127.0.0.1:9/cb" })
        const url = new URL(oauth.authorizationUrl({ state, scope }))
        assert.strictEqual(url.searchParams.getAll("state").length, state === "" ? 0 : 1)
        if (state !== "") assert.strictEqual(url.searchParams.get("state"), state)
        const normalised = scope
          .split(/[\s,]+/)
          .filter((s) => s !== "")
          .join(" ")
        assert.strictEqual(url.searchParams.get("scope"), normalised === "" ? null : normalised)
      }).pipe(Effect.provide(mock(issuing())))
  )

  it.effect.prop(
    "parseResponseUrl returns any code for the matching state, refuses any other state",
    [Schema.NonEmptyString, Schema.NonEmptyString, Schema.String],
    ([code, state, other]) =>
      Effect.gen(function* () {
        if (!wellFormed(code, state, other)) return
        const query = new URLSearchParams({ code, state }).toString()
        assert.strictEqual(
          yield* AuthorizationCode.parseResponseUrl(`http://127.0.0.1/cb?${query}`, { expectedState: state }),
          code
        )
        if (other !== state) {
          const error = yield* Effect.flip(
            AuthorizationCode.parseResponseUrl(query, { expectedState: other === "" ? `x${state}` : other })
          )
          assert.match(error.message, /state mismatch/)
        }
      })
  )

  it.prop("a PKCE challenge is the base64url SHA-256 of any verifier", [Schema.Uint8Array], ([bytes]) => {
    const pair = Pkce.fromBytes(bytes)
    assert.strictEqual(pair.challenge, Pkce.challengeOf(pair.verifier))
    assert.match(pair.challenge, /^[A-Za-z0-9_-]{43}$/)
  })
})
