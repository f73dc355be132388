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
 * and, here, sign-in (`store`) and sign-out (`clear`).
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
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

export { RefreshRejected } from "./flight/renewal.js"
export { staleAt, type TokenFailure } from "./flight/state.js"

export interface SingleFlight {
  /** The cached token while it is fresh, else one renewal shared by every concurrent caller. */
  readonly getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** A token other than `rejected`: the cached one when another fiber already replaced it, else a renewal. */
  readonly forceRefresh: (rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** Stores a token obtained elsewhere (a code exchange, a sign-in), in the flight's turn (this process's lock). */
  readonly store: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /**
   * Sign-out: forgets the token and clears the cache entry, in the flight's turn and under the cache's `withLock`,
   * so that a renewal under way (here or elsewhere) lands before it, never after (renewals write by
   * `compareAndSet`, which an emptied entry refuses). TokenCacheError when the cache has no `clear`.
   */
  readonly signOut: Effect.Effect<void, TokenCacheError>
  /** The still-valid cached token, read synchronously without running an Effect (the Promise facade's fast path). */
  readonly peek: () => Redacted.Redacted<string> | undefined
  /**
   * Read synchronously: when the token is stale and a renewal is under way, that renewal awaited (what
   * `getAccessToken` would do), which touches nothing else of the flight; `otherwise` runs if it was interrupted.
   * Undefined in every other case (the caller runs `getAccessToken`). `UserTokens`' callers that arrive during their
   * user's renewal wait this way, without a hold on the user's state of their own.
   */
  readonly joinUnderWay: (
    otherwise: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  ) => Effect.Effect<Redacted.Redacted<string>, TokenFailure> | undefined
}

export const make = (options: {
  /** Span and log prefix, e.g. "ClientCredentials". */
  readonly name: string
  readonly cache: TokenCache
  readonly skew: Duration.Duration
  readonly clock: Clock.Clock
  /** Obtains a new token; `current` is the newest token known (its refresh token, for the refresh grant). */
  readonly renew: Renewal.Renew
  /** Whether a cache entry is this provider's (client, authorization server, scope); others read as none. */
  readonly accepts?: ((token: TokenInfo) => boolean) | undefined
  /**
   * When a shared cache (one with `withLock`) cannot be reached: `"local"` renews in this process alone (client
   * credentials); `"fail"` fails with its TokenCacheError (a shared refresh token must not be used outside the fleet
   * lock). A cache without `withLock` that fails always fails the call.
   */
  readonly whenCacheDown?: "local" | "fail" | undefined
  /**
   * What an empty shared entry means: `"signedOut"` (a store of users: the user was signed out, maybe by another
   * process; nothing is written back) or `"keep"` (the default: a flushed store, the provider's token is kept).
   */
  readonly entryGone?: "signedOut" | "keep" | undefined
  /** Within this long of going stale, the first caller starts a renewal in the background (see `refreshAhead`). */
  readonly refreshAhead?: Duration.Duration | undefined
  /** Where background work runs (renewals ahead of expiry, retried writes): interrupted when it closes. */
  readonly scope: Scope.Scope
}): Effect.Effect<SingleFlight> =>
  Effect.gen(function* () {
    const { cache, clock, name, scope } = options
    const accepts = options.accepts ?? (() => true)
    const entryGone = options.entryGone ?? "keep"
    const skewMillis = Duration.toMillis(options.skew)

    const memo = Memo.make({ name, cache, clock, skewMillis, accepts, entryGone })
    const writer = SharedWrite.make({ name, cache, cell: memo.cell, scope, entryGone })
    const renewNow = Renewal.make({
      name,
      clock,
      skewMillis,
      memo,
      writer,
      renew: options.renew,
      accepts,
      entryGone
    })
    const obtain = CrossProcess.make({
      name,
      cache,
      memo,
      renewNow,
      whenCacheDown: options.whenCacheDown ?? "fail",
      entryGone
    })
    const { awaitUnderWay, busy, exclusive, joinOrLead } = Join.make(memo.cell)
    const ahead = RefreshAhead.make({
      name,
      cell: memo.cell,
      aheadMillis: options.refreshAhead === undefined ? 0 : Duration.toMillis(options.refreshAhead),
      skewMillis,
      scope,
      busy,
      renewal: (usable) => joinOrLead(obtain(usable).pipe(withSpanWhenTraced(`${name}.refreshAhead`)), () => true)
    })

    const renewStale = joinOrLead(obtain(() => true).pipe(withSpanWhenTraced(`${name}.getAccessToken`)), () => true)

    const getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.suspend(() => {
      const entry = MutableRef.get(memo.cell).memo
      // read synchronously (what `currentTimeMillis` does, one step less per call)
      const now = clock.unsafeCurrentTimeMillis()
      return Option.isSome(entry) && memo.isFresh(entry.value, now)
        ? ahead.isDue(entry.value, now)
          ? Effect.as(ahead.start(entry.value), entry.value.token.accessToken)
          : Effect.succeed(entry.value.token.accessToken)
        : renewStale
    })

    const forceRefresh = (rejected: Redacted.Redacted<string>) => {
      const other = (token: Redacted.Redacted<string>) => Redacted.value(token) !== Redacted.value(rejected)
      return joinOrLead(
        obtain((token) => other(token.accessToken)).pipe(withSpanWhenTraced(`${name}.forceRefresh`)),
        other
      )
    }

    // none when a renewal ahead is due: the caller then runs `getAccessToken`, which starts it
    const peek = () => {
      const entry = MutableRef.get(memo.cell).memo
      const now = clock.unsafeCurrentTimeMillis()
      return Option.isSome(entry) && memo.isFresh(entry.value, now) && !ahead.isDue(entry.value, now)
        ? entry.value.token.accessToken
        : undefined
    }

    const joinUnderWay = (otherwise: Effect.Effect<Redacted.Redacted<string>, TokenFailure>) => {
      const entry = MutableRef.get(memo.cell).memo
      // a fresh token is served (or renewed ahead) by `getAccessToken` itself
      return Option.isSome(entry) && memo.isFresh(entry.value, clock.unsafeCurrentTimeMillis())
        ? undefined
        : awaitUnderWay(otherwise)
    }

    const store = (token: TokenInfo) => exclusive(Effect.zipRight(memo.remember(token), cache.set(token)))

    const underCacheLock = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | TokenCacheError> =>
      cache.withLock === undefined ? self : cache.withLock(self)
    const forgetAll = Effect.sync(() => State.update(memo.cell, () => ({ memo: Option.none(), unwritten: undefined })))
    const clearEntry = cache.clear
    const signOut: Effect.Effect<void, TokenCacheError> =
      clearEntry === undefined
        ? // nothing is forgotten: the tokens stay usable until the sign-out can be done
          new TokenCacheError({
            message: "cannot sign out: this TokenStore's caches have no clear operation (give them a clear())"
          })
        : exclusive(underCacheLock(Effect.zipRight(forgetAll, clearEntry)))

    return { getAccessToken, forceRefresh, store, signOut, peek, joinUnderWay }
  })
