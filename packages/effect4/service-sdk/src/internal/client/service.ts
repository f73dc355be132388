/**
 * Assembling a `ServiceClient` service: the options checked, the request policy's `HttpClient`, `request` on top of
 * it, and the typed resources on top of `request`.
 */
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type { Options, Service } from "../../ServiceClient.js"
import { ConfigurationError } from "../../ServiceError.js"
import { positiveDuration, resolveUrl, retryCount } from "../config.js"
import * as Request from "./request.js"
import * as RequestPolicy from "./requestPolicy.js"
import * as Resources from "./resources.js"

export const build = (
  config: RequestPolicy.PolicyConfig,
  tokens: RequestPolicy.TokenSource,
  httpClient: HttpClient.HttpClient
): Service => {
  const policy = RequestPolicy.make(config, tokens, httpClient)
  const request = Request.make(policy.send)
  return {
    http: policy.http,
    request,
    ...Resources.make(request),
    withTokenProvider: (provider) => build(config, provider, httpClient)
  }
}

export const resolveOptions = (options: Options) =>
  Effect.gen(function* () {
    if (typeof options !== "object" || options === null) {
      return yield* new ConfigurationError({ message: "ServiceClient options must be an object" })
    }
    return {
      apiUrl: yield* resolveUrl(options.apiUrl, "apiUrl"),
      timeout: yield* positiveDuration(options.timeout, "30 seconds", "timeout"),
      maxRetries: yield* retryCount(options.maxRetries),
      maxRetryAfter: yield* positiveDuration(options.maxRetryAfter, "60 seconds", "maxRetryAfter")
    } satisfies RequestPolicy.PolicyConfig
  })
