/**
 * The stored JSON of a `TokenInfo` and the comparison of `compareAndSet` (`TokenCache.decodeJson`, `encodeJson`,
 * `sameEntry` re-export them): here, below both `TokenCache.ts` and the file cache, so that neither imports the
 * other. The stored format's rules are `shared/tokenJson.ts`'s (through `TokenInfo.decodeText`/`encodeText`), one for
 * both lines.
 */
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { sameTokenJson } from "@service-sdk/shared/tokenJson"
import { decodeText, encodeText, type TokenInfo } from "../TokenInfo.js"

const refreshOf = (token: TokenInfo) =>
  token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken)

export const sameEntry = (expected: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>): boolean =>
  sameTokenJson(
    Option.match(expected, {
      onNone: () => undefined,
      onSome: (t) => ({ access_token: Redacted.value(t.accessToken), refresh_token: refreshOf(t) })
    }),
    Option.match(current, {
      onNone: () => undefined,
      onSome: (t) => ({ access_token: Redacted.value(t.accessToken), refresh_token: refreshOf(t) })
    })
  )

export const decodeJson = (text: string): Option.Option<TokenInfo> => Option.fromUndefinedOr(decodeText(text))

export const encodeJson = (token: TokenInfo): string => encodeText(token)
