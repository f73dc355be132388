/**
 * The single flight's state, in one place: one `MutableRef` (read synchronously by `peek`, changed only inside
 * `Effect.sync`, so every change is atomic on the one JavaScript thread).
 */
import type * as Exit from "effect/Exit"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type { AuthenticationError, TokenCacheError, TransportError } from "../../ServiceError.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { staleAtMillis } from "@service-sdk/shared/fleetRules"
import { derivedToken } from "../derivedToken.js"

export type TokenFailure = AuthenticationError | TransportError | TokenCacheError

/** A cached token with the instant (epoch ms) from which it is no longer served. */
export interface Entry {
  readonly token: TokenInfo
  readonly staleAt: number
}

/** The renewal under way: its outcome, or none when it was interrupted (a waiter then renews itself). */
export type Outcome = Option.Option<Exit.Exit<Redacted.Redacted<string>, TokenFailure>>

/**
 * The renewal under way, as its waiters await it: a JavaScript promise of its outcome. A promise rather than a
 * `Deferred`: completing a `Deferred` resumes its waiters from the leader's call, and a waiter's own `then` resumes it
 * from its own context (a Cloudflare Worker cancels a request whose fiber goes on inside another request's I/O;
 * docs/runtimes.md).
 */
export interface Renewing {
  readonly outcome: Promise<Outcome>
}

export interface State {
  /** The newest token known to this process. */
  readonly memo: Option.Option<Entry>
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
  memo: Option.none(),
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
 * A new token's lifetime counted from when it was asked for, not from when its answer was read (a process paused
 * in between must not believe an old token young), and stamped with that instant so every process knows it.
 */
export const fromRequestStart = (token: TokenInfo, startedMillis: number, nowMillis: number) => {
  const expiresAt = token.expiresAt - Math.max(0, nowMillis - startedMillis) / 1000
  return derivedToken({ ...token, expiresAt, issuedAt: Math.min(startedMillis / 1000, expiresAt) })
}
