/**
 * A token as the SDK caches it, and its stored JSON form (one format for both Effect lines).
 *
 * @since 2.0.0
 */
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { parseTokenJson, stringifyTokenJson, type TokenJson } from "@service-sdk/shared/tokenJson"

/**
 * A token as the SDK caches it. `expiresAt` is absolute: seconds since the Unix epoch (may be fractional), computed
 * as now + `expires_in` from the Effect `Clock`. Its JSON form, `{ access_token, expires_at, refresh_token?, scope? }`
 * plus the fields the providers add (`client_id`, `auth_url`, `issued_at`, `refresh_rejected`), is what the file,
 * directory and Redis caches store, for this line and the Effect 3 line alike.
 *
 * @since 2.0.0
 */
export class TokenInfo extends Schema.Class<TokenInfo>("service-sdk/TokenInfo")({
  accessToken: Schema.RedactedFromValue(Schema.String),
  expiresAt: Schema.Finite,
  refreshToken: Schema.optional(Schema.RedactedFromValue(Schema.String)),
  scope: Schema.optional(Schema.String),
  /** The client the token was issued to (written by the providers; an entry for another client reads as none). */
  clientId: Schema.optional(Schema.String),
  /** The authorization server that issued it. */
  authUrl: Schema.optional(Schema.String),
  /** When it was issued (seconds since the epoch): with `expiresAt`, its lifetime, for short-lived tokens. */
  issuedAt: Schema.optional(Schema.Finite),
  /** Set once the authorization server answered `invalid_grant` to `refreshToken`: it is never sent again. */
  refreshRejected: Schema.optional(Schema.Boolean),
  /** When the user signed in (seconds since the epoch): set by the code exchange, kept by every refresh. */
  signedInAt: Schema.optional(Schema.Finite),
  /** When the sign-in ends (seconds since the epoch): the refresh token's end; refreshing does not extend it. */
  signInEndsAt: Schema.optional(Schema.Finite)
}) {}

/**
 * The JSON form of a {@link TokenInfo}, as a Schema: decodes `{ access_token, expires_at, ... }` strictly.
 *
 * @since 2.0.0
 */
export const TokenInfoJsonSchema = TokenInfo.pipe(
  Schema.encodeKeys({
    accessToken: "access_token",
    expiresAt: "expires_at",
    refreshToken: "refresh_token",
    clientId: "client_id",
    authUrl: "auth_url",
    issuedAt: "issued_at",
    refreshRejected: "refresh_rejected",
    signedInAt: "signed_in_at",
    signInEndsAt: "sign_in_ends_at"
  })
)

/**
 * The plain JSON form of a stored token (the same type name as the Effect 3 line's).
 *
 * @since 2.0.0
 */
export type TokenInfoJson = TokenJson
export type { TokenJson }

/**
 * A token's JSON form (absent fields left out).
 *
 * @since 2.0.0
 */
export const toJson = (token: TokenInfo): TokenJson => ({
  access_token: Redacted.value(token.accessToken),
  expires_at: token.expiresAt,
  ...(token.refreshToken !== undefined ? { refresh_token: Redacted.value(token.refreshToken) } : {}),
  ...(token.scope !== undefined ? { scope: token.scope } : {}),
  ...(token.clientId !== undefined ? { client_id: token.clientId } : {}),
  ...(token.authUrl !== undefined ? { auth_url: token.authUrl } : {}),
  ...(token.issuedAt !== undefined ? { issued_at: token.issuedAt } : {}),
  ...(token.refreshRejected === true ? { refresh_rejected: true as const } : {}),
  ...(token.signedInAt !== undefined ? { signed_in_at: token.signedInAt } : {}),
  ...(token.signInEndsAt !== undefined ? { sign_in_ends_at: token.signInEndsAt } : {})
})

/**
 * The token of a JSON form.
 *
 * @since 2.0.0
 */
export const fromJson = (json: TokenJson): TokenInfo =>
  new TokenInfo({
    accessToken: Redacted.make(json.access_token),
    expiresAt: json.expires_at,
    ...(json.refresh_token !== undefined ? { refreshToken: Redacted.make(json.refresh_token) } : {}),
    ...(json.scope !== undefined ? { scope: json.scope } : {}),
    ...(json.client_id !== undefined ? { clientId: json.client_id } : {}),
    ...(json.auth_url !== undefined ? { authUrl: json.auth_url } : {}),
    ...(json.issued_at !== undefined ? { issuedAt: json.issued_at } : {}),
    ...(json.refresh_rejected === true ? { refreshRejected: true } : {}),
    ...(json.signed_in_at !== undefined ? { signedInAt: json.signed_in_at } : {}),
    ...(json.sign_in_ends_at !== undefined ? { signInEndsAt: json.sign_in_ends_at } : {})
  })

/**
 * Stored text read leniently: anything but an object with a string `access_token` and a finite `expires_at` is
 * undefined; an ill-typed optional field reads as absent.
 *
 * @since 2.0.0
 */
export const decodeText = (text: string): TokenInfo | undefined => {
  const json = parseTokenJson(text)
  return json === undefined ? undefined : fromJson(json)
}

/**
 * The text a shared cache stores (the key order of the stored format).
 *
 * @since 2.0.0
 */
export const encodeText = (token: TokenInfo): string => stringifyTokenJson(toJson(token))
