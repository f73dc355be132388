/**
 * The token-endpoint exchange (RFC 6749 §3.2), shared by every grant: client authentication and the form body
 * (`shared/grant.ts`, one implementation for both lines), one timed attempt, the retry policy, and the Schema decoding
 * of the answer into a {@link TokenInfo}.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AuthenticationError, type ErrorPayload, TransportError } from "../ServiceError.js"
import type { TokenInfo } from "../TokenInfo.js"
import { describeCause, maskSecrets, safeCause } from "@service-sdk/shared/redact"
import { parseRetryAfter, Retryable, withRetries } from "./retry.js"
import { withSafeSpans } from "./safeSpans.js"
import { MAX_TOKEN_RETRY_AFTER_MILLIS } from "@service-sdk/shared/backoff"
import * as Form from "@service-sdk/shared/grant"
import * as Answer from "@service-sdk/shared/tokenResponse"
import { endFromNow } from "@service-sdk/shared/signInEnd"
import { derivedToken } from "./derivedToken.js"

export type Grant =
  | { readonly grant_type: "client_credentials"; readonly scope?: string | undefined }
  | {
      readonly grant_type: "authorization_code"
      readonly code: Redacted.Redacted<string>
      readonly redirect_uri: string
      /** PKCE (RFC 7636 §4.5) */
      readonly code_verifier?: Redacted.Redacted<string> | undefined
    }
  | {
      readonly grant_type: "refresh_token"
      readonly refresh_token: Redacted.Redacted<string>
      readonly scope?: string | undefined
    }

export interface TokenEndpointConfig {
  readonly authUrl: string
  readonly clientId: string
  /** None for a public client (RFC 6749 §2.1): it sends `client_id` in the body and no Authorization header. */
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly timeout: Duration.Duration
  readonly maxRetries: number
}

/** A token endpoint bound to its configuration: one call per grant, retried by the shared policy. */
export type TokenEndpoint = (grant: Grant) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>

/** The grant as sent: its `Redacted` values unwrapped, at the edge, right before the request is built. */
const formOf = (grant: Grant): Form.GrantForm => {
  switch (grant.grant_type) {
    case "client_credentials":
      return grant
    case "authorization_code":
      return {
        grant_type: "authorization_code",
        code: Redacted.value(grant.code),
        redirect_uri: grant.redirect_uri,
        code_verifier: grant.code_verifier === undefined ? undefined : Redacted.value(grant.code_verifier)
      }
    case "refresh_token":
      return { grant_type: "refresh_token", refresh_token: Redacted.value(grant.refresh_token), scope: grant.scope }
  }
}

const secretOf = (secret: Redacted.Redacted<string> | undefined) =>
  secret === undefined ? undefined : Redacted.value(secret)

/** RFC 6749 §2.3.1: the `Authorization: Basic` value of a confidential client (`shared/grant.ts`). */
export const clientAuthorization = (clientId: string, clientSecret: Redacted.Redacted<string>): string =>
  Form.basicAuthorization(clientId, Redacted.value(clientSecret))

/**
 * The secret values a grant's request carries (the client secret, the code, the PKCE verifier, the refresh token):
 * what must be masked wherever server-supplied text could echo them back (`shared/grant.ts`).
 */
export const requestSecrets = (
  grant: Grant,
  clientSecret: Redacted.Redacted<string> | undefined
): ReadonlyArray<string> => Form.grantSecrets(formOf(grant), secretOf(clientSecret))

/**
 * RFC 6749 §5.1, with `expires_in` required: a token without a lifetime cannot be renewed on time. Built and
 * compiled on first use: nothing of it is evaluated at import (issue 31).
 */
const tokenResponseDecoder = () =>
  Schema.decodeUnknownEither(
    Schema.Struct({
      access_token: Schema.NonEmptyString,
      token_type: Schema.optional(Schema.NullOr(Schema.String)),
      expires_in: Schema.Number.pipe(Schema.finite(), Schema.nonNegative()),
      refresh_token: Schema.optional(Schema.NullOr(Schema.String)),
      scope: Schema.optional(Schema.NullOr(Schema.String)),
      // the refresh token's remaining lifetime (seconds), when the server tells: the end of the sign-in
      refresh_token_expires_in: Schema.optional(
        Schema.NullOr(Schema.Number.pipe(Schema.finite(), Schema.nonNegative()))
      )
    })
  )
let decodeTokenResponse: ReturnType<typeof tokenResponseDecoder> | undefined

/** Which fields of a token response are wrong, without echoing any value (one of them may be the token). */
const describeIssues = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const fields = [...new Set(issues.map((issue) => (issue.path.length === 0 ? "body" : issue.path.join("."))))]
  return `invalid or missing ${fields.join(", ")}`
}

const malformed = (status: number, description: string) =>
  new AuthenticationError({
    message: Answer.malformedMessage(status, description),
    status,
    payload: { error: Answer.MALFORMED_ERROR, error_description: description }
  })

const rejected = (status: number, payload: ErrorPayload | undefined) =>
  new AuthenticationError({ message: Answer.rejectedMessage(status, payload), status, payload })

/** Turns one token-endpoint answer into a token, a final error, or a {@link Retryable} one. */
const interpret = (
  response: HttpClientResponse.HttpClientResponse,
  text: string,
  requestedScope: string | undefined,
  secrets: ReadonlyArray<string>
): Effect.Effect<TokenInfo, AuthenticationError | TransportError | Retryable<TransportError>> =>
  Effect.gen(function* () {
    const status = response.status
    const body = Answer.parseJsonBody(text)
    if (status >= 200 && status < 300) {
      if (!body.ok) return yield* malformed(status, "the body is not JSON")
      decodeTokenResponse ??= tokenResponseDecoder()
      const decoded = decodeTokenResponse(body.value)
      if (decoded._tag === "Left") return yield* malformed(status, describeIssues(decoded.left))
      const token = decoded.right
      // Bearer and visible ASCII (RFC 6750 §2.1); final: the server answered, just not with a usable token
      const unusable = Answer.unusableToken(token)
      if (unusable !== undefined) return yield* malformed(status, unusable)
      const now = yield* Clock.currentTimeMillis
      const scope = token.scope ?? requestedScope
      // decoded and checked above: finite lifetimes, a usable access token. Every token records when it was issued
      // (its lifetime, for the short-lived rule, holds for a sign-in's first token too); a sign-in end out of range
      // is unknown (DESIGN section 9, "Tokens")
      return derivedToken({
        accessToken: Redacted.make(token.access_token),
        expiresAt: now / 1000 + token.expires_in,
        issuedAt: now / 1000,
        refreshToken: token.refresh_token ? Redacted.make(token.refresh_token) : undefined,
        scope: scope ?? undefined,
        signInEndsAt: endFromNow(now / 1000, token.refresh_token_expires_in)
      })
    }
    if (status === 429 || status >= 500) {
      const retryAfter =
        status === 429 || status === 503 ? yield* parseRetryAfter(response.headers["retry-after"]) : Option.none()
      const waitTooLong = Option.exists(retryAfter, (wait) => Duration.toMillis(wait) > MAX_TOKEN_RETRY_AFTER_MILLIS)
      const error = new TransportError({
        message: waitTooLong
          ? `token endpoint answered ${status} and asked to retry after ${Duration.format(Option.getOrThrow(retryAfter))}`
          : `token endpoint answered ${status}`,
        status
      })
      return yield* waitTooLong ? Effect.fail(error) : Effect.fail(new Retryable(error, retryAfter))
    }
    return yield* rejected(status, body.ok ? Answer.oauthErrorPayload(body.value, secrets) : undefined)
  })

/**
 * One call's attempts, each given `timeout`, retried by the shared policy. An attempt whose time ran out is not
 * abandoned: the server may have acted on it (rotated the refresh token, used the code), and its answer is then the
 * only copy of what it issued. Until the call ends the first token any attempt gets is the call's answer, and a
 * refusal of a later attempt (the grant already used by the earlier one) waits up to one more `timeout` for them.
 */
const keepingLateAnswers = (
  exchange: Effect.Effect<TokenInfo, AuthenticationError | TransportError | Retryable<TransportError>>,
  timeout: Duration.Duration,
  timedOut: () => Effect.Effect<never, Retryable<TransportError>>,
  maxRetries: number
): Effect.Effect<TokenInfo, AuthenticationError | TransportError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const answer = yield* Deferred.make<TokenInfo>()
      const late: Array<Fiber.Fiber<TokenInfo, unknown>> = []
      const attempt = Effect.gen(function* () {
        const fiber = yield* Effect.forkIn(
          Effect.tap(exchange, (token) => Deferred.succeed(answer, token)),
          scope
        )
        const exit = yield* Effect.timeoutOption(Fiber.await(fiber), timeout)
        if (Option.isSome(exit)) return yield* exit.value
        late.push(fiber)
        return yield* timedOut()
      })
      return yield* Effect.raceFirst(withRetries(attempt, maxRetries), Deferred.await(answer)).pipe(
        Effect.catchIf(
          (error) => error._tag === "AuthenticationError" && late.length > 0,
          (refused) =>
            Effect.firstSuccessOf(late.map(Fiber.join)).pipe(
              Effect.timeoutOption(timeout),
              Effect.flatMap((token) => (Option.isSome(token) ? Effect.succeed(token.value) : Effect.fail(refused))),
              Effect.catchAll(() => Effect.fail(refused))
            )
        )
      )
    })
  )

/** Binds the exchange to a configuration and an `HttpClient`. */
export const make = (config: TokenEndpointConfig, httpClient: HttpClient.HttpClient): TokenEndpoint => {
  const url = `${config.authUrl}/api/token`
  const clientSecret = secretOf(config.clientSecret)
  const authentication = Form.clientAuthentication(config.clientId, clientSecret)
  const client = withSafeSpans(httpClient)
  // The Basic credential (the header, its base64 and the decoded `id:secret`) on top of each value the request carries.
  const credentialSecrets = Form.credentialSecrets(config.clientId, clientSecret)
  return (grant) => {
    const form = formOf(grant)
    const secrets = [...credentialSecrets, ...Form.grantSecrets(form, clientSecret)]
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders({ ...authentication.headers, accept: "application/json" }),
      HttpClientRequest.bodyUrlParams({ ...Form.grantParameters(form), ...authentication.body })
    )
    const requestedScope = grant.grant_type === "authorization_code" ? undefined : grant.scope
    const exchange = client.execute(request).pipe(
      Effect.flatMap((response) =>
        Effect.flatMap(response.text, (text) => interpret(response, text, requestedScope, secrets))
      ),
      Effect.catchTags({
        RequestError: (cause) =>
          Effect.fail(
            new Retryable(
              new TransportError({
                // a client or proxy may quote the request it was sending: its secrets are masked
                message: `cannot reach the token endpoint ${url}: ${maskSecrets(describeCause(cause), secrets)}`,
                cause: safeCause(cause, secrets)
              })
            )
          ),
        ResponseError: (cause) =>
          Effect.fail(
            new Retryable(
              new TransportError({
                message: `the token endpoint's answer broke off: ${maskSecrets(describeCause(cause), secrets)}`,
                status: cause.response.status,
                cause: safeCause(cause, secrets)
              })
            )
          )
      }),
      Effect.tapError((failure) =>
        Effect.logDebug(
          failure instanceof Retryable
            ? `token request failed, may retry: ${failure.error.message}`
            : `token request failed: ${failure.message}`
        )
      )
    )
    const timedOut = () => {
      const error = new TransportError({
        message: `token request to ${url} timed out after ${Duration.format(config.timeout)}`
      })
      return Effect.zipRight(
        Effect.logDebug(`token request failed, may retry: ${error.message}`),
        Effect.fail(new Retryable(error))
      )
    }
    return keepingLateAnswers(exchange, config.timeout, timedOut, config.maxRetries).pipe(
      Effect.withSpan("TokenEndpoint.request", { attributes: { "oauth.grant_type": grant.grant_type } })
    )
  }
}
