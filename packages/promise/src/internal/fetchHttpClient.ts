/**
 * The HTTP client of `@service-sdk/promise`: Node's built-in `fetch` (undici inside Node) instead of a second copy of
 * undici in the bundle (half a megabyte). The build puts this module where the facade loads
 * `@effect/platform-node/NodeHttpClient` on its first request, so it has the same name.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Layer from "effect/Layer"

/** The facade's default client, on Node's `fetch`. */
export const layerUndici: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer
