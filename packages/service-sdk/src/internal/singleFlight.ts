/**
 * The single flight, shared by every provider: a `Ref`-held memo of the last token seen, a `Semaphore` so that
 * concurrent callers on a stale token cause exactly one renewal, and the shared {@link TokenCache} re-read under the
 * lock (and under the cache's own cross-process lock, when it has one).
 */
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type { AuthenticationError, TokenCacheError, TransportError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import type { TokenInfo } from "../TokenInfo.js"

export type TokenFailure = AuthenticationError | TransportError | TokenCacheError

/** A cached token with the instant (epoch ms) from which it is no longer served: `expiresAt - skew`. */
interface Entry {
  readonly token: TokenInfo
  readonly staleAt: number
}

export interface SingleFlight {
  /** The cached token while `now < expiresAt - skew`, else one renewal shared by every concurrent caller. */
  readonly getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** A token other than `rejected`: the cached one when another fiber already replaced it, else a renewal. */
  readonly forceRefresh: (rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** Stores a token obtained elsewhere (a code exchange), under the lock. */
  readonly store: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** The still-valid cached token, read synchronously without running an Effect (the Promise facade's fast path). */
  readonly peek: () => Redacted.Redacted<string> | undefined
}

/** Reads a Ref without running an Effect. A `Ref` is a `MutableRef` behind `Ref.get`; fall back to running it. */
const readNow = <A>(ref: Ref.Ref<A>): A => {
  const cell = (ref as unknown as { readonly ref?: MutableRef.MutableRef<A> }).ref
  return typeof cell === "object" && cell !== null && Symbol.for("effect/MutableRef") in cell
    ? MutableRef.get(cell)
    : Effect.runSync(Ref.get(ref))
}

export const make = (options: {
  /** Span and log prefix, e.g. "ClientCredentials". */
  readonly name: string
  readonly cache: TokenCache
  readonly skew: Duration.Duration
  readonly clock: Clock.Clock
  /** Obtains a new token; `current` is the newest token known (its refresh token, for the refresh grant). */
  readonly renew: (current: Option.Option<TokenInfo>) => Effect.Effect<TokenInfo, AuthenticationError | TransportError>
}): Effect.Effect<SingleFlight> =>
  Effect.gen(function* () {
    const { cache, clock, name, renew } = options
    const skewMillis = Duration.toMillis(options.skew)
    const memo = yield* Ref.make(Option.none<Entry>())
    const lock = yield* Effect.makeSemaphore(1)

    const remember = (token: TokenInfo) =>
      Ref.set(memo, Option.some({ token, staleAt: token.expiresAt * 1000 - skewMillis }))
    const isFresh = (entry: Entry, now: number) => now < entry.staleAt

    /** Stores a new token: in the memo first, so a failing cache backend loses nothing in this process. */
    const store = (token: TokenInfo) => Effect.zipRight(remember(token), cache.set(token))

    /** The shared cache's entry, remembered unless the memo already holds a newer token. */
    const readCache = Effect.tap(cache.get, (found) =>
      Option.isSome(found) && !Option.exists(readNow(memo), (entry) => entry.token.expiresAt > found.value.expiresAt)
        ? remember(found.value)
        : Effect.void
    )

    /**
     * Under the lock: the memo, then the shared cache, then (inside the cache's cross-process lock) the cache once
     * more and at last a renewal. `usable` says whether a cached token will do.
     */
    const obtain = (usable: (token: TokenInfo) => boolean) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const usableNow = (entry: Option.Option<Entry>) =>
            Effect.map(clock.currentTimeMillis, (now) =>
              Option.filter(entry, (found) => isFresh(found, now) && usable(found.token))
            )
          const memoized = yield* usableNow(yield* Ref.get(memo))
          if (Option.isSome(memoized)) return memoized.value.token.accessToken
          yield* readCache
          const cached = yield* usableNow(yield* Ref.get(memo))
          if (Option.isSome(cached)) return cached.value.token.accessToken

          const renewal = Effect.gen(function* () {
            if (cache.withLock !== undefined) {
              // another process may have renewed while we waited for the cross-process lock
              yield* readCache
              const shared = yield* usableNow(yield* Ref.get(memo))
              if (Option.isSome(shared)) return shared.value.token.accessToken
            }
            // the memo now holds the newest token known here or in the cache (and so the newest refresh token)
            const current = Option.map(yield* Ref.get(memo), (entry) => entry.token)
            const token = yield* renew(current)
            const now = yield* clock.currentTimeMillis
            yield* Effect.logDebug(`${name}: token refreshed, expires in ${Math.round(token.expiresAt - now / 1000)} s`)
            // The token is good even when the cache cannot keep it: serve it (the memo has it) and say so.
            yield* store(token).pipe(
              Effect.catchAll((error) => Effect.logWarning(`${name}: the new token was not cached: ${error.message}`))
            )
            return token.accessToken
          })
          return yield* cache.withLock === undefined ? renewal : cache.withLock(renewal)
        })
      )

    const renewLocked = obtain(() => true).pipe(Effect.withSpan(`${name}.getAccessToken`))

    /**
     * The renewal under way, if any. Stale callers that arrive while it runs wait for it together instead of taking
     * the lock one after the other (one hand-off per waiter: a herd of 10,000 paid for 10,000 of them). When it
     * succeeds they read the memo again; when it fails or is interrupted they take the lock as before (so a failure
     * is not shared and the next caller tries again).
     */
    let renewing: Deferred.Deferred<boolean> | undefined

    const awaitRenewal = (running: Deferred.Deferred<boolean>) =>
      Effect.flatMap(Deferred.await(running), (renewed) => (renewed ? getAccessToken : renewLocked))

    const lead = Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (renewing !== undefined) return restore(awaitRenewal(renewing))
        const done = Deferred.unsafeMake<boolean>(FiberId.none)
        renewing = done
        return Effect.onExit(restore(renewLocked), (exit) => {
          if (renewing === done) renewing = undefined
          return Deferred.succeed(done, Exit.isSuccess(exit))
        })
      })
    )

    const renewStale: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.suspend(() =>
      renewing === undefined ? lead : awaitRenewal(renewing)
    )

    const getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.flatMap(
      Ref.get(memo),
      (entry) =>
        Effect.flatMap(clock.currentTimeMillis, (now) =>
          Option.isSome(entry) && isFresh(entry.value, now) ? Effect.succeed(entry.value.token.accessToken) : renewStale
        )
    )

    const forceRefresh = (rejected: Redacted.Redacted<string>) =>
      obtain((token) => Redacted.value(token.accessToken) !== Redacted.value(rejected)).pipe(
        Effect.withSpan(`${name}.forceRefresh`)
      )

    const peek = () => {
      const entry = readNow(memo)
      return Option.isSome(entry) && isFresh(entry.value, clock.unsafeCurrentTimeMillis())
        ? entry.value.token.accessToken
        : undefined
    }

    return { getAccessToken, forceRefresh, store: (token) => lock.withPermits(1)(store(token)), peek }
  })
