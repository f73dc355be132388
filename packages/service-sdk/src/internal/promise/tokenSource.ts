/**
 * What a facade token provider is made of (its runtime and its `TokenProvider` service), kept out of the public
 * objects: the facade's own classes look it up here instead of reading fields off a provider.
 */
import type * as Redacted from "effect/Redacted"
import type { TokenProviderService } from "../../TokenProvider.js"
import type { FacadeRuntime } from "./runtime.js"

/**
 * A provider's runtime and service; `owned`: whether closing the provider closes the runtime; `peek`: the still-valid
 * cached token read synchronously, for a provider the facade made itself (the fast path).
 */
export interface TokenSource<R> {
  readonly runtime: FacadeRuntime<R>
  readonly service: TokenProviderService
  readonly owned: boolean
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
