/**
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A token as the SDK caches it. `expiresAt` is absolute: seconds since the Unix epoch (may be fractional), computed
 * as now + `expires_in` from the Effect `Clock`. It encodes to and decodes from the plain JSON the file and Redis
 * caches store: `{ access_token, expires_at, refresh_token?, scope? }`.
 *
 * @since 0.1.0
 */
export class TokenInfo extends Schema.Class<TokenInfo>("service-sdk/TokenInfo")({
  accessToken: Schema.propertySignature(Schema.Redacted(Schema.String)).pipe(Schema.fromKey("access_token")),
  expiresAt: Schema.propertySignature(Schema.Number.pipe(Schema.finite())).pipe(Schema.fromKey("expires_at")),
  refreshToken: Schema.optional(Schema.Redacted(Schema.String)).pipe(Schema.fromKey("refresh_token")),
  scope: Schema.optional(Schema.String)
}) {}

/**
 * The JSON form of a {@link TokenInfo}.
 *
 * @since 0.1.0
 */
export type TokenInfoJson = typeof TokenInfo.Encoded
