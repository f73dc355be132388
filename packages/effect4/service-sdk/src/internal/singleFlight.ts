/**
 * The single flight, shared by every provider: concurrent callers on a stale token cause exactly one renewal, whose
 * outcome they all share; the cache is read again under the lock (this process's, then the cache's `withLock`
 * across processes); every write of a renewal or of an `invalid_grant` mark goes through `compareAndSet`, and a
 * refused write serves the newer entry (the loser of a rotation race serves the winner's token).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import { type AuthenticationError, TokenCacheError, type TransportError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import { TokenInfo } from "../TokenInfo.js"
import { sleepOnLiveClock, withSpanWhenTraced } from "./liveServices.js"
import {
  RACE_READ_PAUSE_MILLIS,
  RACE_READS,
  staleAtMillis,
  VANISHED_ENTRY_GRACE_MILLIS
} from "@service-sdk/shared/fleetRules"

export type TokenFailure = AuthenticationError | TransportError | TokenCacheError

/**
 * The renewal under way, as its waiters await it: a JavaScript promise of what each waiter runs, the renewal's exit
 * (its token or failure) or, for an interrupted one, a fresh look at the stale path (the first leads the next
 * renewal). A promise rather than a `Deferred`: completing a `Deferred` resumes its waiters synchronously inside the
 * leader's call, and a waiter's own `then` resumes it in its own context (a Cloudflare Worker cancels a request whose
 * fiber goes on inside another request's I/O; docs/runtimes.md).
 */
interface Renewing {
  readonly outcome: Promise<Effect.Effect<Redacted.Redacted<string>, TokenFailure>>
}

/** The wait for an entry gone under a holder of a refresh token (`shared/fleetRules.ts`, one rule for both lines). */
export { VANISHED_ENTRY_GRACE_MILLIS }

/**
 * A renewal's `invalid_grant` (RFC 6749 §5.2): `error` for the callers, and `rejected`, the entry to store so that
 * no process sends that refresh token again (`refreshRejected` set), when there is one.
 */
export class RefreshRejected {
  readonly _tag = "RefreshRejected"
  constructor(
    readonly error: AuthenticationError,
    readonly rejected: TokenInfo | undefined
  ) {}
}

export type Renew = (
  current: Option.Option<TokenInfo>
) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | RefreshRejected>

/**
 * From when (epoch ms) a token is renewed: `expiresAt - skew`, or half-way through a short lifetime
 * (`shared/fleetRules.ts`, one rule for both lines).
 */
export const staleAt: (token: TokenInfo, skewMillis: number) => number = staleAtMillis

/**
 * A new token's lifetime counted from when it was asked for (a process paused in between must not believe an old
 * token young), stamped with that instant so every process knows its lifetime.
 */
const fromRequestStart = (token: TokenInfo, startedMillis: number, nowMillis: number) => {
  const expiresAt = token.expiresAt - Math.max(0, nowMillis - startedMillis) / 1000
  return new TokenInfo({ ...token, expiresAt, issuedAt: Math.min(startedMillis / 1000, expiresAt) })
}

const same = (a: Redacted.Redacted<string>, b: Redacted.Redacted<string>) => Redacted.value(a) === Redacted.value(b)

export interface SingleFlight {
  readonly getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  readonly forceRefresh: (rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** Stores a token obtained elsewhere (a code exchange, a sign-in), under this process's lock. */
  readonly store: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Forgets the token and clears the entry, under this process's lock and the cache's `withLock`. */
  readonly signOut: Effect.Effect<void, TokenCacheError>
}

export const make = (options: {
  /** Span and log prefix, e.g. "ClientCredentials". */
  readonly name: string
  readonly cache: TokenCache
  readonly skewMillis: number
  readonly renew: Renew
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
    const { cache, name, accepts, skewMillis } = options
    // background work (a retried cache write, a renewal ahead of expiry) lives in the provider's scope: closing it
    // (a layer's, a user's state's) stops that work; nothing is forked detached
    const scope = yield* Scope.Scope
    const lock = yield* Semaphore.make(1)
    let memo: { readonly token: TokenInfo; readonly staleAt: number } | undefined
    let renewing: Renewing | undefined
    let cacheDown = false
    /** A renewed token whose write failed and is being retried in the background. */
    let unwritten: TokenInfo | undefined
    const aheadMillis = options.refreshAheadMillis ?? 0
    /** The token a renewal ahead of expiry was started for (one try per token). */
    let aheadFor: TokenInfo | undefined

    const remember = (token: TokenInfo) => {
      memo = { token, staleAt: staleAt(token, skewMillis) }
    }
    const fresh = (token: TokenInfo, now: number) => token.refreshRejected !== true && now < staleAt(token, skewMillis)
    const usableMemo = (usable: (token: TokenInfo) => boolean) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        memo !== undefined && now < memo.staleAt && memo.token.refreshRejected !== true && usable(memo.token)
          ? Option.some(memo.token.accessToken)
          : Option.none()
      )
    /** The entry as stored (the `expected` of a later compare-and-set), remembered when it is ours and not older. */
    const readCache = Effect.tap(cache.get, (found) =>
      Effect.sync(() => {
        if (Option.isNone(found)) {
          if (options.entryGone === "signedOut") memo = undefined
          return
        }
        // a newer memo is kept, unless its refresh token was rejected (the entry may hold a new sign-in)
        const newer =
          memo !== undefined && memo.token.refreshRejected !== true && memo.token.expiresAt > found.value.expiresAt
        if (accepts(found.value) && !newer) {
          remember(found.value)
        }
      })
    )
    const servable = (entry: Option.Option<TokenInfo>, usable: (token: TokenInfo) => boolean) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        Option.filter(entry, (token) => accepts(token) && fresh(token, now) && usable(token))
      )
    const compareAndSet =
      cache.compareAndSet ?? ((_: Option.Option<TokenInfo>, next: TokenInfo) => Effect.as(cache.set(next), true))

    /**
     * A write that failed (the cache unreachable), tried again (0.25 s doubling to 5 s) until it lands, or the entry
     * holds a newer token, or a newer renewal of this process replaced it.
     */
    const retryWrite = (initial: Option.Option<TokenInfo>, token: TokenInfo) =>
      Effect.gen(function* () {
        let expected = initial
        for (let attempt = 0; attempt < 40; attempt++) {
          yield* Effect.sleep(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)))
          if (memo?.token !== token) return
          const written = yield* Effect.result(compareAndSet(expected, token))
          if (written._tag === "Failure") continue
          if (written.success) return yield* Effect.logInfo(`${name}: the renewed token reached the token cache`)
          const now = yield* Effect.orElseSucceed(cache.get, () => Option.none<TokenInfo>())
          // an older entry of ours (a store that lost writes) is written over; a newer one wins
          if (Option.isSome(now) && accepts(now.value) && now.value.expiresAt < token.expiresAt) {
            expected = now
            continue
          }
          return yield* Effect.logInfo(`${name}: the token cache holds a newer entry; the renewed token is not written`)
        }
      })

    /** Writes `token` over `expected`; a refused write serves the newer entry, or ours over an older one of ours. */
    const writeRenewed = (
      expected: Option.Option<TokenInfo>,
      token: TokenInfo,
      usable: (token: TokenInfo) => boolean
    ): Effect.Effect<Redacted.Redacted<string>> =>
      Effect.gen(function* () {
        let against = expected
        for (let attempt = 0; attempt < 3; attempt++) {
          const written = yield* Effect.result(compareAndSet(against, token))
          if (written._tag === "Failure") {
            yield* Effect.logWarning(
              `${name}: the new token was not cached (${written.failure.message}); retrying in the background until it is`
            )
            // a rotated refresh token must not live only in this process's memory
            unwritten = token
            yield* Effect.forkIn(
              Effect.ensuring(
                retryWrite(against, token),
                Effect.sync(() => {
                  if (unwritten === token) unwritten = undefined
                })
              ),
              scope
            )
            break
          }
          if (written.success) break
          const now = yield* Effect.orElseSucceed(cache.get, () => Option.none<TokenInfo>())
          const newer = yield* servable(now, usable)
          if (Option.isSome(newer)) {
            remember(newer.value)
            yield* Effect.logDebug(`${name}: another process renewed first; serving its token`)
            return newer.value.accessToken
          }
          if (Option.isNone(now) && options.entryGone === "signedOut") {
            memo = undefined
            break
          }
          // an older token of ours (a stale or marked entry, a store that lost writes): ours is newer
          if (Option.isSome(now) && !(accepts(now.value) && now.value.expiresAt < token.expiresAt)) {
            yield* Effect.logWarning(`${name}: the token cache holds another token; the renewed one is not written`)
            break
          }
          against = now
        }
        remember(token)
        return token.accessToken
      })

    /** The token of a renewal elsewhere that rotated ours out, read `RACE_READS` times (`shared/fleetRules.ts`). */
    const winnerOfRace = (usable: (token: TokenInfo) => boolean, current: Option.Option<TokenInfo>) =>
      Effect.gen(function* () {
        for (let attempt = 0; attempt < RACE_READS; attempt++) {
          // the other process writes in real time: this pause is on the live clock whatever clock the provider has
          if (attempt > 0) yield* sleepOnLiveClock(RACE_READ_PAUSE_MILLIS)
          const now = yield* Effect.orElseSucceed(readCache, () => Option.none<TokenInfo>())
          const other = yield* servable(now, usable)
          if (Option.isSome(other) && !Option.exists(current, (t) => same(t.accessToken, other.value.accessToken))) {
            return other
          }
        }
        return Option.none<TokenInfo>()
      })

    const renewNow = (usable: (token: TokenInfo) => boolean, expected: Option.Option<TokenInfo> | undefined) =>
      Effect.gen(function* () {
        const current = Option.fromUndefinedOr(memo?.token)
        const started = yield* Clock.currentTimeMillis
        const renewed = yield* Effect.result(options.renew(current))
        if (renewed._tag === "Failure") {
          const failure = renewed.failure
          if (failure._tag !== "RefreshRejected") return yield* Effect.fail(failure)
          if (expected !== undefined) {
            // another process may have renewed with a newer refresh token: ours was then rotated out, and the winner
            // may still be writing its token (no lock, or a lock lost in a failover): read a few times
            const other = yield* winnerOfRace(usable, current)
            if (Option.isSome(other)) return other.value.accessToken
            if (failure.rejected !== undefined) {
              const marked = yield* Effect.result(compareAndSet(expected, failure.rejected))
              if (marked._tag === "Failure") {
                yield* Effect.logWarning(`${name}: cannot record the rejected refresh token: ${marked.failure.message}`)
              }
            }
          }
          if (failure.rejected !== undefined) remember(failure.rejected)
          return yield* Effect.fail(failure.error)
        }
        const now = yield* Clock.currentTimeMillis
        const token = fromRequestStart(renewed.success, started, now)
        yield* Effect.logDebug(`${name}: token refreshed, expires in ${Math.round(token.expiresAt - now / 1000)} s`)
        if (expected === undefined) {
          remember(token)
          return token.accessToken
        }
        return yield* writeRenewed(expected, token, usable)
      })

    /** The cache cannot be reached: renew in this process alone, or fail, as the provider asked. */
    const degraded = (
      error: TokenCacheError,
      usable: (token: TokenInfo) => boolean
    ): Effect.Effect<Redacted.Redacted<string>, TokenFailure> =>
      options.whenCacheDown !== "local" || cache.withLock === undefined
        ? Effect.fail(error)
        : Effect.gen(function* () {
            if (!cacheDown) {
              cacheDown = true
              yield* Effect.logWarning(
                `${name}: the token cache cannot be reached (${error.message}); renewing in this process until it answers`
              )
            }
            const memoized = yield* usableMemo(usable)
            if (Option.isSome(memoized)) return memoized.value
            return yield* renewNow(usable, undefined)
          })

    /** Whether an empty entry should be waited for: we hold a refresh token no write of ours is pending for. */
    const vanishedUnderUs = (found: Option.Option<TokenInfo>) =>
      options.entryGone === "keep" &&
      Option.isNone(found) &&
      unwritten === undefined &&
      memo?.token.refreshToken !== undefined

    const obtain = (usable: (token: TokenInfo) => boolean): Effect.Effect<Redacted.Redacted<string>, TokenFailure> =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const memoized = yield* usableMemo(usable)
          if (Option.isSome(memoized)) return memoized.value
          const read = yield* Effect.result(readCache)
          if (read._tag === "Failure") return yield* degraded(read.failure, usable)
          if (cacheDown) {
            cacheDown = false
            yield* Effect.logInfo(`${name}: the token cache answers again; renewals are shared again`)
          }
          const cached = yield* usableMemo(usable)
          if (Option.isSome(cached)) return cached.value
          const withLock = cache.withLock
          if (withLock === undefined) return yield* renewNow(usable, read.success)
          const underLock = (mayWait: boolean) =>
            Effect.gen(function* () {
              // another process may have renewed while we waited for the cross-process lock
              const found = yield* readCache
              const shared = yield* usableMemo(usable)
              if (Option.isSome(shared)) return Option.some(shared.value)
              if (mayWait && vanishedUnderUs(found)) return Option.none()
              return Option.some(yield* renewNow(usable, found))
            })
          // The shared entry is gone but we hold a refresh token: a renewal under way elsewhere may be rotating it.
          // Let go of the lock for a while (its holder stores its token), then renew only if the entry is still gone.
          return yield* withLock(underLock(true)).pipe(
            Effect.flatMap((token) =>
              Option.isSome(token)
                ? Effect.succeed(token.value)
                : Effect.andThen(
                    Effect.sleep(VANISHED_ENTRY_GRACE_MILLIS),
                    Effect.map(withLock(underLock(false)), Option.getOrThrow)
                  )
            ),
            Effect.catchIf(
              (error): error is TokenCacheError => error instanceof TokenCacheError,
              (error) => degraded(error, usable)
            )
          )
        })
      )

    /**
     * Joins the renewal under way (its outcome shared: a failure fails every waiter at once), or leads one. A
     * renewal that was interrupted lets a waiter lead the next one; a joined token that is not `usable` (the one a
     * 401 rejected) makes the caller lead another.
     */
    /** What each waiter of an interrupted renewal runs: the stale path again (`stale`, built below). */
    const again: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.suspend(() => stale.self)
    /** `usable` undefined: any token of the renewal will do (a joiner then only awaits it). */
    const joinOrLeadWith = (
      work: Effect.Effect<Redacted.Redacted<string>, TokenFailure>,
      usable: ((token: Redacted.Redacted<string>) => boolean) | undefined
    ) => {
      const lead = Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          // the fiber may have yielded since it looked: another caller may lead by now
          const other = renewing
          if (other !== undefined) return yield* restore(join(other))
          let settle!: (outcome: Effect.Effect<Redacted.Redacted<string>, TokenFailure>) => void
          const running: Renewing = {
            outcome: new Promise((resolve) => {
              settle = resolve
            })
          }
          renewing = running
          const exit = yield* Effect.exit(restore(work))
          if (renewing === running) renewing = undefined
          settle(Exit.hasInterrupts(exit) ? again : exit)
          return yield* exit
        })
      )
      // a herd's joiners share one effect per renewal: nothing is made per caller
      let joined:
        | { readonly running: Renewing; readonly effect: Effect.Effect<Redacted.Redacted<string>, TokenFailure> }
        | undefined
      const join = (running: Renewing): Effect.Effect<Redacted.Redacted<string>, TokenFailure> => {
        if (joined === undefined || joined.running !== running) {
          // each waiter's fiber subscribes to the promise itself (its `then`), so it resumes in its own context
          const outcome = Effect.flatten(Effect.promise(() => running.outcome))
          const effect =
            usable === undefined
              ? outcome
              : Effect.flatMap(outcome, (token) => (usable(token) ? Effect.succeed(token) : self))
          joined = { running, effect }
        }
        return joined.effect
      }
      /** What to run now: join the renewal under way, or lead one. */
      const enter = (): Effect.Effect<Redacted.Redacted<string>, TokenFailure> => {
        const running = renewing
        return running === undefined ? lead : join(running)
      }
      const self: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.suspend(enter)
      return { self, enter }
    }

    const joinOrLead = (
      work: Effect.Effect<Redacted.Redacted<string>, TokenFailure>,
      usable: ((token: Redacted.Redacted<string>) => boolean) | undefined
    ): Effect.Effect<Redacted.Redacted<string>, TokenFailure> => joinOrLeadWith(work, usable).self

    /** Starts one renewal in the background for `current` (a token within `refreshAhead` of going stale). */
    const renewAhead = (current: TokenInfo) => {
      aheadFor = current
      const other = (token: Redacted.Redacted<string>) => !same(token, current.accessToken)
      return Effect.forkIn(
        joinOrLead(
          obtain((token) => other(token.accessToken)).pipe(withSpanWhenTraced(`${name}.refreshAhead`)),
          other
        ).pipe(
          Effect.catch((error) =>
            Effect.logWarning(
              `${name}: the renewal ahead of expiry failed (${error.message}); retried when the token goes stale`
            )
          )
        ),
        scope
      )
    }

    // the clock of the fiber that made the provider (a TestClock in tests), read synchronously on the cached path
    const clock = yield* Clock.Clock
    // built once: a herd's joiners only look for the renewal under way and await it (nothing made per caller)
    const stale = joinOrLeadWith(obtain(() => true).pipe(withSpanWhenTraced(`${name}.getAccessToken`)), undefined)
    const renewStale = stale.enter
    const getAccessToken = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      const entry = memo
      if (entry === undefined || now >= entry.staleAt || entry.token.refreshRejected === true) return renewStale()
      return aheadMillis > 0 && now >= entry.staleAt - aheadMillis && aheadFor !== entry.token && renewing === undefined
        ? Effect.as(renewAhead(entry.token), entry.token.accessToken)
        : Effect.succeed(entry.token.accessToken)
    })

    const forceRefresh = (rejected: Redacted.Redacted<string>) => {
      const other = (token: Redacted.Redacted<string>) => !same(token, rejected)
      return joinOrLead(
        obtain((token) => other(token.accessToken)).pipe(withSpanWhenTraced(`${name}.forceRefresh`)),
        other
      )
    }

    const store = (token: TokenInfo) =>
      lock.withPermits(1)(
        Effect.andThen(
          Effect.sync(() => remember(token)),
          cache.set(token)
        )
      )

    const clear = cache.clear
    const underCacheLock = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | TokenCacheError> =>
      cache.withLock === undefined ? self : cache.withLock(self)
    const signOut: Effect.Effect<void, TokenCacheError> =
      clear === undefined
        ? Effect.fail(new TokenCacheError({ message: "cannot sign out: this token cache has no clear operation" }))
        : lock.withPermits(1)(
            underCacheLock(
              Effect.andThen(
                Effect.sync(() => {
                  memo = undefined
                }),
                clear
              )
            )
          )

    return { getAccessToken, forceRefresh, store, signOut }
  })
