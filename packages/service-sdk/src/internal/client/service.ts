/**
 * Assembling a `ServiceClient` service: options (explicit, then `SERVICE_SDK_API_URL`, then defaults), the request
 * policy's `HttpClient`, `request` on top of it, and the typed resources on top of `request`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import type { ServiceClientOptions, ServiceClientService } from "../../ServiceClient.js"
import { optionalString, positiveDuration, resolveUrl, retryCount } from "../config.js"
import { withSafeSpans } from "../safeSpans.js"
import * as Request from "./request.js"
import * as RequestPolicy from "./requestPolicy.js"
import * as Resources from "./resources.js"

export const resolveOptions = (options: ServiceClientOptions) =>
  Effect.gen(function* () {
    const apiUrl = yield* Effect.flatMap(optionalString(options.apiUrl, "apiUrl"), (url) => resolveUrl(url, "apiUrl"))
    const timeout = yield* positiveDuration(options.timeout, "30 seconds", "timeout")
    const maxRetries = yield* retryCount(options.maxRetries)
    const maxRetryAfter = yield* positiveDuration(options.maxRetryAfter, "60 seconds", "maxRetryAfter")
    return { apiUrl, timeout, maxRetries, maxRetryAfter } satisfies RequestPolicy.PolicyConfig
  })

export const make = (options: ServiceClientOptions, tokens: RequestPolicy.TokenSource) =>
  Effect.gen(function* () {
    const config = yield* resolveOptions(options)
    return build(config, tokens, withSafeSpans(yield* HttpClient.HttpClient))
  })

const build = (
  config: RequestPolicy.PolicyConfig,
  tokens: RequestPolicy.TokenSource,
  httpClient: HttpClient.HttpClient
): ServiceClientService => {
  const http = RequestPolicy.make(config, tokens, httpClient)
  const request = Request.make(http)
  return {
    http,
    request,
    ...Resources.make(request),
    withTokenProvider: (provider) => build(config, provider, httpClient)
  }
}
