/**
 * The single flight's state, in one place: one `MutableRef` (changed only by synchronous code between two steps of
 * a fiber, so every change is atomic on the one JavaScript thread).
 */
import type * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Redacted from "effect/Redacted"
import type { AuthenticationError, TokenCacheError, TransportError } from "../../ServiceError.js"
import { TokenInfo } from "../../TokenInfo.js"
import { staleAtMillis } from "@service-sdk/shared/fleetRules"

export type TokenFailure = AuthenticationError | TransportError | TokenCacheError

/** A cached token with the instant (epoch ms) from which it is no longer served. */
export interface Entry {
  readonly token: TokenInfo
  readonly staleAt: number
}

/**
 * The renewal under way, as its waiters await it: a JavaScript promise of what each waiter runs, the renewal's exit
 * (its token or failure) or, for an interrupted one, a fresh look at the stale path (the first leads the next
 * renewal). A promise rather than a `Deferred`: completing a `Deferred` resumes its waiters synchronously inside the
 * leader's call, and a waiter's own `then` resumes it in its own context (a Cloudflare Worker cancels a request whose
 * fiber goes on inside another request's I/O; docs/runtimes.md).
 */
export interface Renewing {
  readonly outcome: Promise<Effect.Effect<Redacted.Redacted<string>, TokenFailure>>
}

export interface State {
  /** The newest token known to this process. */
  readonly memo: Entry | undefined
  /** The renewal under way, which callers that arrive meanwhile join. */
  readonly renewing: Renewing | undefined
  /** The token a renewal ahead of expiry was started for (one try per token). */
  readonly aheadFor: TokenInfo | undefined
  /** Whether the shared cache is known to be unreachable (a warning is logged once per outage). */
  readonly cacheDown: boolean
  /** A renewed token whose write to the shared cache failed and is being retried in the background. */
  readonly unwritten: TokenInfo | undefined
}

export const initial: State = {
  memo: undefined,
  renewing: undefined,
  aheadFor: undefined,
  cacheDown: false,
  unwritten: undefined
}

export type Cell = MutableRef.MutableRef<State>

export const make = (): Cell => MutableRef.make(initial)

export const update = (cell: Cell, f: (state: State) => Partial<State>): void => {
  const state = MutableRef.get(cell)
  MutableRef.set(cell, { ...state, ...f(state) })
}

/**
 * From when (epoch ms) a token is renewed: `expiresAt - skew`, or half-way through a short lifetime
 * (`shared/fleetRules.ts`, one rule for both lines).
 */
export const staleAt: (token: TokenInfo, skewMillis: number) => number = staleAtMillis

/**
 * A new token's lifetime counted from when it was asked for (a process paused in between must not believe an old
 * token young), stamped with that instant so every process knows its lifetime.
 */
export const fromRequestStart = (token: TokenInfo, startedMillis: number, nowMillis: number) => {
  const expiresAt = token.expiresAt - Math.max(0, nowMillis - startedMillis) / 1000
  return new TokenInfo({ ...token, expiresAt, issuedAt: Math.min(startedMillis / 1000, expiresAt) })
}

/** Whether two tokens are the same (their values: two `Redacted` of one token are two objects). */
export const same = (a: Redacted.Redacted<string>, b: Redacted.Redacted<string>) =>
  Redacted.value(a) === Redacted.value(b)
