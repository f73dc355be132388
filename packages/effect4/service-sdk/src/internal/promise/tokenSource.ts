/**
 * What a facade token provider is made of (its runtime and its `TokenProvider` service), kept out of the public
 * objects: the facade's own classes look it up here instead of reading fields off a provider.
 */
import type * as Redacted from "effect/Redacted"
import type { Service as TokenProviderService } from "../../TokenProvider.js"
import type { FacadeRuntime } from "./runtime.js"

/**
 * A provider's runtime and service; `owned`: whether closing the provider closes the runtime. The service runs in
 * the provider's surroundings (its logger, its `fetch`) whichever runtime runs it: an `AsyncServiceClient` that
 * has it as its `authProvider` logs the provider's lines to the provider's logger.
 */
export interface TokenSource<R> {
  readonly runtime: FacadeRuntime<R>
  /** The service as its own runtime runs it (the runtime's layer carries its surroundings). */
  readonly service: TokenProviderService
  /** The service as another runtime runs it (an `AsyncServiceClient`'s): in the provider's surroundings. */
  readonly shared: TokenProviderService
  readonly owned: boolean
  /** The still-valid cached token, read without running an Effect (a provider the facade made itself). */
  readonly peek?: (() => Redacted.Redacted<string> | undefined) | undefined
}

const sources = new WeakMap<object, TokenSource<any>>()

/** Records the source of a facade provider. */
export const register = <R>(provider: object, source: TokenSource<R>): void => {
  sources.set(provider, source)
}

/** The source of a facade provider, or `undefined` for anything else. */
export const sourceOf = (value: unknown): TokenSource<any> | undefined =>
  typeof value === "object" && value !== null ? sources.get(value) : undefined
