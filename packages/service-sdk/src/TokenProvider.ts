/**
 * @since 1.0.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { isVisibleAscii } from "@service-sdk/shared/redact"
import { AuthenticationError, ConfigurationError, type TokenCacheError, type TransportError } from "./ServiceError.js"

/**
 * What every provider supplies and the client consumes.
 *
 * @since 1.0.0
 * @category models
 */
export interface TokenProviderService {
  /** A valid access token: the cached one, or one renewal shared by every concurrent caller. */
  readonly getAccessToken: Effect.Effect<
    Redacted.Redacted<string>,
    AuthenticationError | TransportError | TokenCacheError
  >
  /**
   * After the API rejected `rejected` with 401: a fresh token. When the cache already holds a different token
   * (another fiber refreshed), returns it without a request. Single-flight like `getAccessToken`.
   */
  readonly forceRefresh: (
    rejected: Redacted.Redacted<string>
  ) => Effect.Effect<Redacted.Redacted<string>, AuthenticationError | TransportError | TokenCacheError>
}

/**
 * The token source of a `ServiceClient`: `ClientCredentials.layer`, `AuthorizationCode.layer`, or a fixed token.
 *
 * @since 1.0.0
 * @category tags
 */
export class TokenProvider extends Context.Tag("service-sdk/TokenProvider")<TokenProvider, TokenProviderService>() {
  /**
   * A provider of one fixed token; `forceRefresh` fails, since nothing can renew it. Throws ConfigurationError for a
   * token that is empty or not visible ASCII (it could not be sent as a bearer token).
   *
   * @since 1.0.0
   */
  static static(token: string | Redacted.Redacted<string>): TokenProviderService {
    const accessToken = Redacted.isRedacted(token) ? token : Redacted.make(token)
    const raw: unknown = Redacted.value(accessToken)
    if (typeof raw !== "string" || !isVisibleAscii(raw)) {
      // a programming error on a given value, thrown at once (this constructor is not an Effect)
      throw new ConfigurationError({
        message:
          "TokenProvider.static: the access token must be non-empty visible ASCII (RFC 6750 §2.1: no spaces, control characters or non-ASCII)"
      })
    }
    return {
      getAccessToken: Effect.succeed(accessToken),
      forceRefresh: () =>
        Effect.fail(
          new AuthenticationError({
            message: "the access token was rejected (401) and a fixed access token cannot be refreshed",
            status: 401
          })
        )
    }
  }

  /**
   * A layer of {@link TokenProvider.static}.
   *
   * @since 1.0.0
   */
  static layerStatic(token: string | Redacted.Redacted<string>): Layer.Layer<TokenProvider> {
    return Layer.succeed(TokenProvider, TokenProvider.static(token))
  }
}

/**
 * @since 1.0.0
 */
export declare namespace TokenProvider {
  /**
   * @since 1.0.0
   */
  export type Service = TokenProviderService
}
