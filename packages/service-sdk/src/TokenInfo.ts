/**
 * @since 1.0.0
 */
import * as Schema from "effect/Schema"
import * as Redact from "@service-sdk/shared/redact"

/**
 * A token as the SDK caches it. `expiresAt` is absolute: seconds since the Unix epoch (may be fractional), computed
 * as now + `expires_in` from the Effect `Clock`. It encodes to and decodes from the plain JSON the file and Redis
 * caches store: `{ access_token, expires_at, refresh_token?, scope? }`, plus the optional fields the providers add to
 * bind an entry to its client (`client_id`, `auth_url`), to know its lifetime (`issued_at`), to remember a rejected
 * refresh token (`refresh_rejected`) and to know when the user signed in and when that sign-in ends (`signed_in_at`,
 * `sign_in_ends_at`); absent fields are not written, and entries without them are read as before.
 *
 * @since 1.0.0
 * @category models
 */
export class TokenInfo extends Schema.Class<TokenInfo>("service-sdk/TokenInfo")({
  accessToken: Schema.propertySignature(Schema.Redacted(Schema.String)).pipe(Schema.fromKey("access_token")),
  expiresAt: Schema.propertySignature(Schema.Number.pipe(Schema.finite())).pipe(Schema.fromKey("expires_at")),
  refreshToken: Schema.optional(Schema.Redacted(Schema.String)).pipe(Schema.fromKey("refresh_token")),
  scope: Schema.optional(Schema.String),
  /** The client the token was issued to (written by the providers; an entry for another client reads as none). */
  clientId: Schema.optional(Schema.String).pipe(Schema.fromKey("client_id")),
  /** The authorization server that issued it. */
  authUrl: Schema.optional(Schema.String).pipe(Schema.fromKey("auth_url")),
  /** When it was issued (seconds since the epoch): with `expiresAt`, its lifetime, for short-lived tokens. */
  issuedAt: Schema.optional(Schema.Number.pipe(Schema.finite())).pipe(Schema.fromKey("issued_at")),
  /** Set once the authorization server answered `invalid_grant` to `refreshToken`: it is never sent again. */
  refreshRejected: Schema.optional(Schema.Boolean).pipe(Schema.fromKey("refresh_rejected")),
  /**
   * When the user signed in (seconds since the epoch): set by the code exchange, kept by every refresh.
   *
   * @since 1.0.0
   */
  signedInAt: Schema.optional(Schema.Number.pipe(Schema.finite())).pipe(Schema.fromKey("signed_in_at")),
  /**
   * When the sign-in ends (seconds since the epoch): the refresh token's end, from `refresh_token_expires_in` or the
   * `refreshTokenLifetime` option; refreshing does not extend it.
   *
   * @since 1.0.0
   */
  signInEndsAt: Schema.optional(Schema.Number.pipe(Schema.finite())).pipe(Schema.fromKey("sign_in_ends_at"))
}) {}

/**
 * The JSON form of a {@link TokenInfo}.
 *
 * @since 1.0.0
 * @category models
 */
export type TokenInfoJson = typeof TokenInfo.Encoded

/**
 * `abcd…wxyz`: enough of a token to tell two apart, never enough to use (for logs and terminals).
 *
 * @since 1.0.0
 * @category formatting
 */
export const maskToken: (token: string) => string = Redact.maskToken
