/**
 * The token-endpoint exchange (RFC 6749 §3.2), shared by every grant: client authentication and the form body
 * (`shared/grant.ts`), one timed attempt, the retry policy, and the decoding of the answer into a {@link TokenInfo}.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { AuthenticationError, type ErrorPayload, TransportError } from "../ServiceError.js"
import { TokenInfo } from "../TokenInfo.js"
import { parseRetryAfter, Retryable, withRetries } from "./retry.js"
import { withSafeSpans } from "./safeSpans.js"
import { MAX_TOKEN_RETRY_AFTER_MILLIS } from "@service-sdk/shared/backoff"
import { clientAuthentication, type GrantForm, grantParameters, requestSecrets } from "@service-sdk/shared/grant"
import * as Answer from "@service-sdk/shared/tokenResponse"
import { describeCause, maskSecrets, safeCause } from "@service-sdk/shared/redact"
import { endFromNow } from "@service-sdk/shared/signInEnd"

/** A grant, its secrets still `Redacted` (unwrapped only when the form is built). */
export type Grant =
  | { readonly grant_type: "client_credentials"; readonly scope?: string | undefined }
  | {
      readonly grant_type: "authorization_code"
      readonly code: Redacted.Redacted<string>
      readonly redirect_uri: string
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
  /** None for a public client (RFC 6749 §2.1). */
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly timeout: Duration.Duration
  readonly maxRetries: number
}

/** A token endpoint bound to its configuration: one call per grant, retried by the shared policy. */
export type TokenEndpoint = (grant: Grant) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>

const formOf = (grant: Grant): GrantForm => {
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

/** RFC 6749 §5.1, with `expires_in` required: a token without a lifetime cannot be renewed on time. */
const TokenResponse = Schema.Struct({
  access_token: Schema.NonEmptyString,
  token_type: Schema.optional(Schema.NullOr(Schema.String)),
  expires_in: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  refresh_token: Schema.optional(Schema.NullOr(Schema.String)),
  scope: Schema.optional(Schema.NullOr(Schema.String)),
  /** When the refresh token (so the sign-in) ends, in seconds from now (the Service's 2026 rule) */
  refresh_token_expires_in: Schema.optional(Schema.NullOr(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))))
})
const decodeTokenResponse = Schema.decodeUnknownResult(TokenResponse)

/** Which fields of a token response are wrong, without echoing any value (one of them may be the token). */
const describeIssues = (body: unknown): string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the body is not a JSON object"
  const record = body as Record<string, unknown>
  const wrong: Array<string> = []
  if (typeof record.access_token !== "string" || record.access_token === "") wrong.push("access_token")
  if (typeof record.expires_in !== "number" || !Number.isFinite(record.expires_in) || record.expires_in < 0) {
    wrong.push("expires_in")
  }
  for (const key of ["token_type", "refresh_token", "scope"]) {
    if (record[key] !== undefined && record[key] !== null && typeof record[key] !== "string") wrong.push(key)
  }
  return `invalid or missing ${wrong.length === 0 ? "body" : wrong.join(", ")}`
}

const malformed = (status: number, description: string) =>
  new AuthenticationError({
    message: Answer.malformedMessage(status, description),
    status,
    payload: { error: Answer.MALFORMED_ERROR, error_description: description }
  })

const rejected = (status: number, payload: ErrorPayload | undefined) =>
  new AuthenticationError({
    message: Answer.rejectedMessage(status, payload),
    status,
    ...(payload !== undefined ? { payload } : {})
  })

/** Turns one token-endpoint answer into a token, a final error, or a {@link Retryable} one. */
const interpret = (
  status: number,
  retryAfterHeader: string | undefined,
  text: string,
  requestedScope: string | undefined,
  secrets: ReadonlyArray<string>
): Effect.Effect<TokenInfo, AuthenticationError | TransportError | Retryable<TransportError>> =>
  Effect.gen(function* () {
    const body = Answer.parseJsonBody(text)
    if (status >= 200 && status < 300) {
      if (!body.ok) return yield* malformed(status, "the body is not JSON")
      const decoded = decodeTokenResponse(body.value)
      if (decoded._tag === "Failure") return yield* malformed(status, describeIssues(body.value))
      const token = decoded.success
      // Bearer and visible ASCII (RFC 6750 §2.1); final: the server answered, just not with a usable token
      const unusable = Answer.unusableToken(token)
      if (unusable !== undefined) return yield* malformed(status, unusable)
      const now = yield* Clock.currentTimeMillis
      const scope = token.scope ?? requestedScope
      // every token records when it was issued (its lifetime, for the short-lived rule, holds for a sign-in's first
      // token too); a sign-in end out of range is unknown (DESIGN section 9, "Tokens")
      const signInEndsAt = endFromNow(now / 1000, token.refresh_token_expires_in)
      return new TokenInfo({
        accessToken: Redacted.make(token.access_token),
        expiresAt: now / 1000 + token.expires_in,
        issuedAt: now / 1000,
        ...(token.refresh_token ? { refreshToken: Redacted.make(token.refresh_token) } : {}),
        ...(scope != null ? { scope } : {}),
        ...(signInEndsAt !== undefined ? { signInEndsAt } : {})
      })
    }
    if (status === 429 || status >= 500) {
      const retryAfter = status === 429 || status === 503 ? yield* parseRetryAfter(retryAfterHeader) : undefined
      const tooLong = retryAfter !== undefined && Duration.toMillis(retryAfter) > MAX_TOKEN_RETRY_AFTER_MILLIS
      const error = new TransportError({
        message: tooLong
          ? `token endpoint answered ${status} and asked to retry after ${Duration.format(retryAfter)}`
          : `token endpoint answered ${status}`,
        status
      })
      return yield* tooLong ? Effect.fail(error) : Effect.fail(new Retryable(error, retryAfter))
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
              Effect.catch(() => Effect.fail(refused))
            )
        )
      )
    })
  )

/** Binds the exchange to a configuration and an `HttpClient`. */
export const make = (config: TokenEndpointConfig, httpClient: HttpClient.HttpClient): TokenEndpoint => {
  const url = `${config.authUrl}/api/token`
  const secret = config.clientSecret === undefined ? undefined : Redacted.value(config.clientSecret)
  const authentication = clientAuthentication(config.clientId, secret)
  // the SDK's safe `http.client` span: the platform's would hold the form's secrets and the token response
  const client = withSafeSpans(httpClient)
  return (grant) => {
    const form = formOf(grant)
    const secrets = requestSecrets(form, config.clientId, secret)
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders({ ...authentication.headers, accept: "application/json" }),
      HttpClientRequest.bodyUrlParams({ ...grantParameters(form), ...authentication.body })
    )
    const requestedScope = grant.grant_type === "authorization_code" ? undefined : grant.scope
    const exchange = client.execute(request).pipe(
      Effect.flatMap((response) =>
        Effect.flatMap(response.text, (text) =>
          interpret(response.status, response.headers["retry-after"], text, requestedScope, secrets)
        )
      ),
      Effect.catchTag("HttpClientError", (cause) =>
        Effect.fail(
          new Retryable(
            new TransportError({
              message: `cannot reach the token endpoint ${url}: ${maskSecrets(describeCause(cause.reason), secrets)}`,
              cause: safeCause(cause.reason, secrets)
            })
          )
        )
      ),
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
      return Effect.andThen(
        Effect.logDebug(`token request failed, may retry: ${error.message}`),
        Effect.fail(new Retryable(error))
      )
    }
    return keepingLateAnswers(exchange, config.timeout, timedOut, config.maxRetries).pipe(
      Effect.withSpan("TokenEndpoint.request", { attributes: { "oauth.grant_type": grant.grant_type } })
    )
  }
}
