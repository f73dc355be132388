/**
 * The stored JSON of a `TokenInfo` and the comparison of `compareAndSet` (`TokenCache.decodeJson`, `encodeJson`,
 * `sameEntry` re-export them): here, below both `TokenCache.ts` and the file cache, so that neither imports the
 * other.
 */
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { parseTokenJson, sameTokenJson, stringifyTokenJson, type TokenJson } from "@service-sdk/shared/tokenJson"
import { TokenInfo } from "../TokenInfo.js"

export const sameEntry = (expected: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>): boolean =>
  sameTokenJson(tokensOf(expected), tokensOf(current))

/** The two values `compareAndSet` compares (the rule is `shared/tokenJson.ts`'s, one for both lines). */
const tokensOf = (entry: Option.Option<TokenInfo>) =>
  Option.isNone(entry)
    ? undefined
    : {
        access_token: Redacted.value(entry.value.accessToken),
        refresh_token: entry.value.refreshToken === undefined ? undefined : Redacted.value(entry.value.refreshToken)
      }

// The stored format's rules (lenient reading, canonical writing) are `shared/tokenJson.ts`, one for both lines; the
// Schema of `TokenInfo` (its `fromKey`s) only maps that JSON to the class and back. Compiled on first use: nothing of
// the schema is evaluated at import (issue 31).
let decodeEntry: ((input: unknown) => Option.Option<TokenInfo>) | undefined
let encodeEntry: ((token: TokenInfo) => TokenJson) | undefined

export const decodeJson = (text: string): Option.Option<TokenInfo> => {
  const json = parseTokenJson(text)
  if (json === undefined) return Option.none()
  decodeEntry ??= Schema.decodeUnknownOption(TokenInfo)
  return decodeEntry(json)
}

export const encodeJson = (token: TokenInfo): string => {
  encodeEntry ??= Schema.encodeSync(TokenInfo) as (token: TokenInfo) => TokenJson
  return stringifyTokenJson(encodeEntry(token))
}
