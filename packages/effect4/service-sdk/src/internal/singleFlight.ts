/**
 * The single flight, shared by every provider: concurrent callers on a stale token cause exactly one renewal, whose
 * outcome they all share. Each job has its place under `flight/`:
 * - `state`: the one state model (memo, renewal under way, renewal ahead, cache outage, unwritten token);
 * - `memo`: the newest token known, fed by renewals and by reads of the shared cache;
 * - `join`: the flight's turn, this process's lock: one renewal (or store, or sign-out) at a time; callers join the
 *   renewal under way and share its outcome;
 * - `crossProcess`: the cache's cross-process `withLock`, and the degraded mode;
 * - `renewal`: one renewal, and the `invalid_grant` re-read and mark;
 * - `sharedWrite`: writes through `compareAndSet`, retried in the background when the cache is unreachable;
 * - `refreshAhead`: renewals started before staleness;
 * and, here, sign-in (`store`) and sign-out (`signOut`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import type * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { TokenCacheError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import type { TokenInfo } from "../TokenInfo.js"
import { withSpanWhenTraced } from "./liveServices.js"
import * as CrossProcess from "./flight/crossProcess.js"
import * as Join from "./flight/join.js"
import * as Memo from "./flight/memo.js"
import * as RefreshAhead from "./flight/refreshAhead.js"
import * as Renewal from "./flight/renewal.js"
import * as SharedWrite from "./flight/sharedWrite.js"
import * as State from "./flight/state.js"
import type { TokenFailure } from "./flight/state.js"

export { RefreshRejected, type Renew } from "./flight/renewal.js"
export { staleAt, type TokenFailure } from "./flight/state.js"

export interface SingleFlight {
  /** The cached token while it is fresh, else one renewal shared by every concurrent caller. */
  readonly getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** A token other than `rejected`: the cached one when another fiber already replaced it, else a renewal. */
  readonly forceRefresh: (rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** Stores a token obtained elsewhere (a code exchange, a sign-in), in the flight's turn (this process's lock). */
  readonly store: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Forgets the token and clears the entry, in the flight's turn and under the cache's `withLock`. */
  readonly signOut: Effect.Effect<void, TokenCacheError>
  /**
   * The cached token while it is fresh and no renewal ahead is due, read synchronously (the Promise facade's fast
   * path); else undefined, and the caller runs `getAccessToken`.
   */
  readonly peek: () => Redacted.Redacted<string> | undefined
}

export const make = (options: {
  /** Span and log prefix, e.g. "ClientCredentials". */
  readonly name: string
  readonly cache: TokenCache
  readonly skewMillis: number
  /** Obtains a new token; `current` is the newest token known (its refresh token, for the refresh grant). */
  readonly renew: Renewal.Renew
  /** Whether a cache entry is this provider's (client, authorization server, scope); others read as none. */
  readonly accepts: (token: TokenInfo) => boolean
  /**
   * When a shared cache (one with `withLock`) cannot be reached: `"local"` renews in this process alone (client
   * credentials); `"fail"` fails with its TokenCacheError (a shared refresh token must not be used outside the lock).
   */
  readonly whenCacheDown: "local" | "fail"
  /** "signedOut": an empty shared entry means the user was signed out (a store of users); "keep": not. */
  readonly entryGone: "signedOut" | "keep"
  /**
   * Within this long of going stale, the first caller starts a renewal in the background (single flight) and is
   * served the still-valid token; a failed background renewal is logged and the normal path takes over (0: off).
   */
  readonly refreshAheadMillis?: number | undefined
}): Effect.Effect<SingleFlight, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { accepts, cache, entryGone, name, skewMillis } = options
    // background work (a retried cache write, a renewal ahead of expiry) lives in the provider's scope: closing it
    // (a layer's, a user's state's) stops that work; nothing is forked detached
    const scope = yield* Scope.Scope

    const memo = Memo.make({ cache, skewMillis, accepts, entryGone })
    const writer = SharedWrite.make({ name, cache, cell: memo.cell, scope, accepts })
    const renewNow = Renewal.make({ name, skewMillis, memo, writer, renew: options.renew, accepts, entryGone })
    const obtain = CrossProcess.make({
      name,
      cache,
      memo,
      renewNow,
      whenCacheDown: options.whenCacheDown,
      entryGone
    })
    /** What each waiter of an interrupted renewal runs: the stale path again (`stale`, built below). */
    const again: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.suspend(() => stale.self)
    const { busy, exclusive, joinOrLead, joinOrLeadWith } = Join.make(memo.cell, again)
    const ahead = RefreshAhead.make({
      name,
      cell: memo.cell,
      aheadMillis: options.refreshAheadMillis ?? 0,
      scope,
      busy,
      renewal: (other) =>
        joinOrLead(obtain((token) => other(token.accessToken)).pipe(withSpanWhenTraced(`${name}.refreshAhead`)), other)
    })

    // the clock of the fiber that made the provider (a TestClock in tests), read synchronously on the cached path
    const clock = yield* Clock.Clock
    // built once: a herd's joiners only look for the renewal under way and await it (nothing made per caller)
    const stale = joinOrLeadWith(obtain(() => true).pipe(withSpanWhenTraced(`${name}.getAccessToken`)), undefined)
    const renewStale = stale.enter
    const getAccessToken = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      const entry = MutableRef.get(memo.cell).memo
      if (entry === undefined || !memo.isFresh(entry, now)) return renewStale()
      return ahead.isDue(entry, now)
        ? Effect.as(ahead.start(entry), entry.token.accessToken)
        : Effect.succeed(entry.token.accessToken)
    })

    const forceRefresh = (rejected: Redacted.Redacted<string>) => {
      const other = (token: Redacted.Redacted<string>) => !State.same(token, rejected)
      return joinOrLead(
        obtain((token) => other(token.accessToken)).pipe(withSpanWhenTraced(`${name}.forceRefresh`)),
        other
      )
    }

    const store = (token: TokenInfo) =>
      exclusive(
        Effect.andThen(
          Effect.sync(() => memo.remember(token)),
          cache.set(token)
        )
      )

    const clear = cache.clear
    const underCacheLock = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | TokenCacheError> =>
      cache.withLock === undefined ? self : cache.withLock(self)
    const signOut: Effect.Effect<void, TokenCacheError> =
      clear === undefined
        ? Effect.fail(new TokenCacheError({ message: "cannot sign out: this token cache has no clear operation" }))
        : exclusive(
            underCacheLock(
              Effect.andThen(
                Effect.sync(() => memo.forget()),
                clear
              )
            )
          )

    const peek = () => {
      const now = clock.currentTimeMillisUnsafe()
      const entry = MutableRef.get(memo.cell).memo
      return entry !== undefined && memo.isFresh(entry, now) && !ahead.isDue(entry, now)
        ? entry.token.accessToken
        : undefined
    }

    return { getAccessToken, forceRefresh, store, signOut, peek }
  })
