/**
 * The single flight, shared by every provider: a `Ref`-held memo of the last token seen, a `Semaphore` so that
 * concurrent callers on a stale token cause exactly one renewal (whose outcome they all share), and the shared
 * {@link TokenCache} re-read under the lock (and under the cache's own cross-process lock, when it has one).
 */
import * as Cause from "effect/Cause"
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
import type * as Scope from "effect/Scope"
import type { AuthenticationError, TokenCacheError, TransportError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import { TokenInfo } from "../TokenInfo.js"

export type TokenFailure = AuthenticationError | TransportError | TokenCacheError

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

/** A cached token with the instant (epoch ms) from which it is no longer served. */
interface Entry {
  readonly token: TokenInfo
  readonly staleAt: number
}

export interface SingleFlight {
  /** The cached token while it is fresh, else one renewal shared by every concurrent caller. */
  readonly getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** A token other than `rejected`: the cached one when another fiber already replaced it, else a renewal. */
  readonly forceRefresh: (rejected: Redacted.Redacted<string>) => Effect.Effect<Redacted.Redacted<string>, TokenFailure>
  /** Stores a token obtained elsewhere (a code exchange), under the lock. */
  readonly store: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Forgets the token: the memo, then the cache entry through `clearCache` (sign-out). */
  readonly clear: (clearCache: Effect.Effect<void, TokenCacheError>) => Effect.Effect<void, TokenCacheError>
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

/**
 * From when (epoch ms) a token is renewed: `expiresAt - skew`, or, for a short-lived token (a known lifetime of at
 * most twice `skew`), half-way through its lifetime, so that it is never renewed on every call.
 */
export const staleAt = (token: TokenInfo, skewMillis: number): number => {
  const expires = token.expiresAt * 1000
  if (token.issuedAt !== undefined && token.issuedAt < token.expiresAt) {
    const lifetime = expires - token.issuedAt * 1000
    if (lifetime <= 2 * skewMillis) return expires - lifetime / 2
  }
  return expires - skewMillis
}

/** The renewal under way: its outcome, or none when it was interrupted (a waiter then renews itself). */
type Outcome = Option.Option<Exit.Exit<Redacted.Redacted<string>, TokenFailure>>

export const make = (options: {
  /** Span and log prefix, e.g. "ClientCredentials". */
  readonly name: string
  readonly cache: TokenCache
  readonly skew: Duration.Duration
  readonly clock: Clock.Clock
  /** Obtains a new token; `current` is the newest token known (its refresh token, for the refresh grant). */
  readonly renew: (
    current: Option.Option<TokenInfo>
  ) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | RefreshRejected>
  /** Whether a cache entry is this provider's (client, authorization server, scope); others read as none. */
  readonly accepts?: ((token: TokenInfo) => boolean) | undefined
  /**
   * When a shared cache (one with `withLock`) cannot be reached: `"local"` renews in this process alone (client
   * credentials); `"fail"` fails with its TokenCacheError (a shared refresh token must not be used outside the fleet
   * lock). A cache without `withLock` that fails always fails the call.
   */
  readonly whenCacheDown?: "local" | "fail" | undefined
  /**
   * Within this long of going stale, the first caller starts a renewal in the background (the single flight's own,
   * so callers that find the token stale meanwhile join it) and is served the still-valid token. One try per token:
   * a failure is logged and the normal path renews at staleness.
   */
  readonly refreshAhead?: Duration.Duration | undefined
  /** Where background renewals run (interrupted when it closes); a daemon fiber when none. */
  readonly scope?: Scope.Scope | undefined
}): Effect.Effect<SingleFlight> =>
  Effect.gen(function* () {
    const { cache, clock, name, renew } = options
    const accepts = options.accepts ?? (() => true)
    const skewMillis = Duration.toMillis(options.skew)
    const memo = yield* Ref.make(Option.none<Entry>())
    const lock = yield* Effect.makeSemaphore(1)

    const remember = (token: TokenInfo) => Ref.set(memo, Option.some({ token, staleAt: staleAt(token, skewMillis) }))
    const isFresh = (entry: Entry, now: number) => now < entry.staleAt

    /** Stores a new token: in the memo first, so a failing cache backend loses nothing in this process. */
    const store = (token: TokenInfo) => Effect.zipRight(remember(token), cache.set(token))

    /** Whether the shared cache is known to be unreachable (a warning is logged once per outage). */
    let cacheDown = false
    const cacheAnswered = Effect.suspend(() => {
      if (!cacheDown) return Effect.void
      cacheDown = false
      return Effect.logInfo(`${name}: the token cache answers again; renewals are shared again`)
    })

    /** The shared cache's entry, remembered when it is ours and the memo holds no newer token. */
    const readCache = cache.get.pipe(
      Effect.tap((found) =>
        Option.isSome(found) &&
        accepts(found.value) &&
        !Option.exists(readNow(memo), (entry) => entry.token.expiresAt > found.value.expiresAt)
          ? remember(found.value)
          : Effect.void
      ),
      Effect.zipLeft(cacheAnswered)
    )

    const usableNow = (usable: (token: TokenInfo) => boolean) =>
      Effect.flatMap(Ref.get(memo), (entry) =>
        Effect.map(clock.currentTimeMillis, (now) =>
          Option.filter(entry, (found) => isFresh(found, now) && usable(found.token))
        )
      )

    /**
     * A renewal: `renew` with the newest token known, the new token stored (served even when the cache cannot keep
     * it), and on `invalid_grant` the rejected refresh token recorded in the cache, unless the cache meanwhile holds
     * another token (a renewal elsewhere), which is then served.
     */
    const renewNow = (
      usable: (token: TokenInfo) => boolean,
      shared: boolean
    ): Effect.Effect<Redacted.Redacted<string>, TokenFailure> =>
      Effect.gen(function* () {
        const current = Option.map(yield* Ref.get(memo), (entry) => entry.token)
        const started = yield* clock.currentTimeMillis
        const renewed = yield* Effect.either(renew(current))
        if (renewed._tag === "Left") {
          const failure = renewed.left
          if (failure._tag !== "RefreshRejected") return yield* failure
          if (shared) {
            // Another process may have renewed with a newer refresh token: ours was then rotated out.
            yield* Effect.ignore(readCache)
            const other = yield* usableNow(usable)
            const otherToken = Option.map(other, (entry) => Redacted.value(entry.token.accessToken))
            if (
              Option.isSome(other) &&
              !Option.exists(current, (token) => Option.contains(otherToken, Redacted.value(token.accessToken)))
            ) {
              return other.value.token.accessToken
            }
          }
          if (failure.rejected !== undefined) {
            yield* store(failure.rejected).pipe(
              Effect.catchAll((error) =>
                Effect.logWarning(`${name}: cannot record the rejected refresh token: ${error.message}`)
              )
            )
          }
          return yield* failure.error
        }
        const now = yield* clock.currentTimeMillis
        const token = fromRequestStart(renewed.right, started, now)
        yield* Effect.logDebug(`${name}: token refreshed, expires in ${Math.round(token.expiresAt - now / 1000)} s`)
        if (shared) {
          // The token is good even when the cache cannot keep it: serve it (the memo has it) and say so.
          yield* store(token).pipe(
            Effect.catchAll((error) => Effect.logWarning(`${name}: the new token was not cached: ${error.message}`))
          )
        } else {
          yield* remember(token)
        }
        return token.accessToken
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
            const memoized = yield* usableNow(usable)
            if (Option.isSome(memoized)) return memoized.value.token.accessToken
            return yield* renewNow(usable, false)
          })

    /**
     * Under the lock: the memo, then the shared cache, then (inside the cache's cross-process lock) the cache once
     * more and at last a renewal. `usable` says whether a cached token will do.
     */
    const obtain = (usable: (token: TokenInfo) => boolean): Effect.Effect<Redacted.Redacted<string>, TokenFailure> =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const memoized = yield* usableNow(usable)
          if (Option.isSome(memoized)) return memoized.value.token.accessToken
          const read = yield* Effect.either(readCache)
          if (read._tag === "Left") return yield* degraded(read.left, usable)
          const cached = yield* usableNow(usable)
          if (Option.isSome(cached)) return cached.value.token.accessToken
          if (cache.withLock === undefined) return yield* renewNow(usable, true)

          const withLock = cache.withLock
          const underLock = (graceMillis: number) =>
            Effect.gen(function* () {
              // another process may have renewed while we waited for the cross-process lock
              const found = yield* readCache
              const shared = yield* usableNow(usable)
              if (Option.isSome(shared)) return Option.some(shared.value.token.accessToken)
              if (graceMillis > 0 && Option.isNone(found) && Option.exists(yield* Ref.get(memo), hasRefreshToken)) {
                return Option.none()
              }
              return Option.some(yield* renewNow(usable, true))
            })
          // The shared entry is gone (FLUSHALL, Redis restarted empty) but we hold a refresh token: a renewal under
          // way elsewhere may be rotating it. Let go of the lock for a while (its holder takes it again and stores
          // its token), then renew only if the entry is still gone.
          const grace = vanishedGrace(cache)
          // Only cache operations fail with TokenCacheError, and never after a token request (see `renewNow`).
          return yield* withLock(underLock(grace)).pipe(
            Effect.flatMap(
              Option.match({
                onSome: Effect.succeed,
                onNone: () =>
                  Effect.zipRight(
                    Effect.sleep(Duration.millis(grace)),
                    Effect.map(withLock(underLock(0)), Option.getOrThrow)
                  )
              })
            ),
            Effect.catchTag("TokenCacheError", (error) => degraded(error, usable))
          )
        })
      )

    /**
     * The renewal under way, if any (for `getAccessToken` or `forceRefresh`). Callers that arrive while it runs wait
     * for it together and share its outcome: its token, or its failure, all at once (the next call after that renews
     * again). When it was interrupted they go on: one of them renews.
     */
    let renewing: Deferred.Deferred<Outcome> | undefined

    /** Joins the renewal under way, or runs `renewal` as the one others join. `accept`: is its token good for us? */
    const joinOrLead = (
      renewal: Effect.Effect<Redacted.Redacted<string>, TokenFailure>,
      accept: (token: Redacted.Redacted<string>) => boolean
    ): Effect.Effect<Redacted.Redacted<string>, TokenFailure> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const running = renewing
          if (running !== undefined) {
            return restore(
              Effect.flatMap(Deferred.await(running), (outcome) =>
                Option.isSome(outcome) && (Exit.isFailure(outcome.value) || accept(outcome.value.value))
                  ? outcome.value
                  : joinOrLead(renewal, accept)
              )
            )
          }
          const done = Deferred.unsafeMake<Outcome>(FiberId.none)
          renewing = done
          return Effect.onExit(restore(renewal), (exit) => {
            if (renewing === done) renewing = undefined
            const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
            const outcome: Outcome = interrupted ? Option.none() : Option.some(exit)
            return Deferred.succeed(done, outcome)
          })
        })
      )

    const renewStale = joinOrLead(obtain(() => true).pipe(Effect.withSpan(`${name}.getAccessToken`)), () => true)

    const aheadMillis = options.refreshAhead === undefined ? 0 : Duration.toMillis(options.refreshAhead)
    /** The token a renewal ahead of expiry was started for (one try per token). */
    let aheadFor: TokenInfo | undefined
    const isAhead = (entry: Entry, now: number) =>
      aheadMillis > 0 && now >= entry.staleAt - aheadMillis && aheadFor !== entry.token

    /** Starts the renewal ahead of `entry`'s staleness in the background, unless a renewal is under way. */
    const startAhead = (entry: Entry): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (aheadFor === entry.token) return Effect.void
        aheadFor = entry.token
        if (renewing !== undefined) return Effect.void
        // a newer token will do: one another process stored in a shared cache included
        const renewal = joinOrLead(
          obtain((token) => staleAt(token, skewMillis) > entry.staleAt).pipe(Effect.withSpan(`${name}.refreshAhead`)),
          () => true
        ).pipe(
          Effect.catchAll((error) =>
            Effect.logWarning(
              `${name}: the renewal ahead of expiry failed (${error.message}); the token will be renewed when it goes stale`
            )
          )
        )
        return Effect.asVoid(
          options.scope === undefined ? Effect.forkDaemon(renewal) : Effect.forkIn(renewal, options.scope)
        )
      })

    const getAccessToken: Effect.Effect<Redacted.Redacted<string>, TokenFailure> = Effect.flatMap(
      Ref.get(memo),
      (entry) =>
        Effect.flatMap(clock.currentTimeMillis, (now) =>
          Option.isSome(entry) && isFresh(entry.value, now)
            ? isAhead(entry.value, now)
              ? Effect.as(startAhead(entry.value), entry.value.token.accessToken)
              : Effect.succeed(entry.value.token.accessToken)
            : renewStale
        )
    )

    const forceRefresh = (rejected: Redacted.Redacted<string>) => {
      const other = (token: Redacted.Redacted<string>) => Redacted.value(token) !== Redacted.value(rejected)
      return joinOrLead(
        obtain((token) => other(token.accessToken)).pipe(Effect.withSpan(`${name}.forceRefresh`)),
        other
      )
    }

    // none when a renewal ahead is due: the caller then runs `getAccessToken`, which starts it
    const peek = () => {
      const entry = readNow(memo)
      const now = clock.unsafeCurrentTimeMillis()
      return Option.isSome(entry) && isFresh(entry.value, now) && !isAhead(entry.value, now)
        ? entry.value.token.accessToken
        : undefined
    }

    // sign-out: under the lock, so a renewal under way lands before the entry is forgotten, not after
    const clear = (clearCache: Effect.Effect<void, TokenCacheError>) =>
      lock.withPermits(1)(Effect.zipRight(Ref.set(memo, Option.none()), clearCache))

    return { getAccessToken, forceRefresh, store: (token) => lock.withPermits(1)(store(token)), clear, peek }
  })

const hasRefreshToken = (entry: Entry) => entry.token.refreshToken !== undefined

/** See the Redis cache: how long to wait when the shared entry vanished under a holder of a refresh token. */
const vanishedGrace = (cache: TokenCache): number => {
  const grace = (cache as unknown as { readonly [key: symbol]: unknown })[
    Symbol.for("service-sdk/TokenCache/vanishedGrace")
  ]
  return typeof grace === "number" && grace > 0 ? grace : 0
}

/**
 * A new token's lifetime counted from when it was asked for, not from when its answer was read (a process paused
 * in between must not believe an old token young), and stamped with that instant so every process knows it.
 */
const fromRequestStart = (token: TokenInfo, startedMillis: number, nowMillis: number) => {
  const expiresAt = token.expiresAt - Math.max(0, nowMillis - startedMillis) / 1000
  return new TokenInfo({ ...token, expiresAt, issuedAt: Math.min(startedMillis / 1000, expiresAt) })
}
