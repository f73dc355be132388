/**
 * One renewal: `renew` with the newest token known, then the new token written over the entry the renewal read.
 * When the entry changed meanwhile (the write is refused), the newer entry is served: the loser of a rotation race
 * serves the winner's token. On `invalid_grant`, the entry is read again (another process may have rotated the
 * refresh token): its fresh token is served, a newer refresh token of ours found there is renewed with (once), and
 * else the rejected refresh token is marked in the entry it came from, never over a newer one.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AuthenticationError, type TransportError } from "../../ServiceError.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { isRestoredRefreshToken, racePausesMillis } from "@service-sdk/shared/fleetRules"
import type { Memo } from "./memo.js"
import type { SharedWrite } from "./sharedWrite.js"
import * as State from "./state.js"

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

const liveClock = Clock.make()

/** What the entry holds after our `invalid_grant`: a token to serve, or a newer refresh token of ours to renew with. */
type Changed =
  | { readonly _tag: "Serve"; readonly token: TokenInfo }
  | { readonly _tag: "RenewFrom"; readonly token: TokenInfo }

export type Renew = (
  current: Option.Option<TokenInfo>
) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | RefreshRejected>

/** Where the renewal's token goes: the shared entry it read (`expected`), or this process alone (degraded mode). */
export type Target =
  | {
      readonly _tag: "Shared"
      readonly expected: Option.Option<TokenInfo>
      /** renewing under the cache's `withLock` (a lock a failover may lose: the entry is watched longer) */
      readonly locked: boolean
    }
  | { readonly _tag: "Local" }

export const make = (options: {
  readonly name: string
  readonly clock: Pick<Clock.Clock, "currentTimeMillis" | "unsafeCurrentTimeMillis">
  readonly skewMillis: number
  readonly memo: Memo
  readonly writer: SharedWrite
  readonly renew: Renew
  readonly accepts: (token: TokenInfo) => boolean
  /** "signedOut": a renewal that finds the entry emptied meanwhile does not write it back (a sign-out elsewhere). */
  readonly entryGone: "signedOut" | "keep"
}) => {
  const { clock, memo, name, writer, accepts } = options

  /** The entry, when it is this provider's, fresh and `usable`: served instead of ours. */
  const servable = (now: Option.Option<TokenInfo>, usable: (token: TokenInfo) => boolean) =>
    Effect.map(clock.currentTimeMillis, (millis) =>
      Option.filter(
        now,
        (token) =>
          accepts(token) &&
          token.refreshRejected !== true &&
          millis < State.staleAt(token, options.skewMillis) &&
          usable(token)
      )
    )

  /** The write of `token` was refused: serve the entry that is there instead, or say what happened. */
  const refused = (
    now: Option.Option<TokenInfo>,
    token: TokenInfo,
    usable: (token: TokenInfo) => boolean,
    depth = 0
  ): Effect.Effect<Redacted.Redacted<string>, AuthenticationError> =>
    Effect.gen(function* () {
      const newer = yield* servable(now, usable)
      if (Option.isSome(newer)) {
        yield* memo.remember(newer.value)
        yield* Effect.logDebug(`${name}: another process renewed first; serving its token`)
        return newer.value.accessToken
      }
      if (Option.isNone(now)) {
        if (options.entryGone === "signedOut") {
          yield* memo.forget
          return yield* new AuthenticationError({
            message: "not signed in: the token was signed out while it was being renewed (sign in again)"
          })
        }
        // the entry vanished (a flushed or restarted store) under our lock: ours is the newest, keep it there
        const again = yield* writer.write(Option.none(), token)
        if (again._tag === "Refused" && depth < 3) return yield* refused(again.now, token, usable, depth + 1)
        yield* memo.remember(token)
        return token.accessToken
      }
      // An older token of ours (a store that lost writes in a failover, a stale or marked entry): ours is the newest
      // of its chain and is written over it. Another client's entry is left alone; ours is served.
      if (accepts(now.value) && now.value.expiresAt < token.expiresAt && depth < 3) {
        const again = yield* writer.write(now, token)
        if (again._tag === "Refused") return yield* refused(again.now, token, usable, depth + 1)
        yield* memo.remember(token)
        return token.accessToken
      }
      yield* Effect.logWarning(`${name}: the token cache holds another token; the renewed one is not written there`)
      yield* memo.remember(token)
      return token.accessToken
    })

  /** A newer refresh token of ours than the one just rejected (`shared/fleetRules.ts`), stale or not. */
  const newerRefreshToken = (now: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>) =>
    Option.filter(
      now,
      (token) => accepts(token) && isRestoredRefreshToken(Option.getOrUndefined(Option.map(current, view)), view(token))
    )

  /** What the entry holds now that is not what we renewed from: a token to serve, or a refresh token to renew with. */
  const changed = (
    now: Option.Option<TokenInfo>,
    current: Option.Option<TokenInfo>,
    usable: (token: TokenInfo) => boolean
  ) =>
    Effect.map(servable(now, usable), (other): Option.Option<Changed> => {
      if (Option.isSome(other) && !sameAccessToken(other.value, current)) {
        return Option.some({ _tag: "Serve", token: other.value })
      }
      return Option.map(newerRefreshToken(now, current), (token) => ({ _tag: "RenewFrom", token }) as const)
    })

  /**
   * After an `invalid_grant`: the token of a renewal elsewhere that rotated our refresh token out. The winner may
   * still be writing it (a cache with `compareAndSet` only, or a lock lost in a failover), so the entry is read a few
   * times more, for up to 0.5 s, 2.5 s under a lock (`shared/fleetRules.ts`), before the refresh token is taken for rejected.
   */
  const winnerOfRace = (usable: (token: TokenInfo) => boolean, current: Option.Option<TokenInfo>, locked: boolean) =>
    Effect.gen(function* () {
      const pauses = racePausesMillis(locked)
      for (let attempt = 0; attempt <= pauses.length; attempt++) {
        // the other process writes in real time: this pause is on the live clock whatever clock the provider has
        if (attempt > 0) {
          yield* Effect.withClock(Effect.sleep(Duration.millis(pauses[attempt - 1]!)), liveClock)
        }
        const now = yield* Effect.orElseSucceed(memo.readCache, () => Option.none<TokenInfo>())
        const found = yield* changed(now, current, usable)
        if (Option.isSome(found)) return found
      }
      return Option.none<Changed>()
    })

  /** Whether the renewal's entry is gone from a store where that means a sign-out (`entryGone: "signedOut"`). */
  const signedOut = (target: Target) =>
    options.entryGone === "signedOut" && target._tag === "Shared" && Option.isNone(target.expected)

  /** A renewal's failure: an `invalid_grant` is checked against the entry (another process may have rotated). */
  const failed = (
    failure: AuthenticationError | TransportError | RefreshRejected,
    usable: (token: TokenInfo) => boolean,
    target: Target,
    current: Option.Option<TokenInfo>,
    again: boolean
  ): Effect.Effect<Redacted.Redacted<string>, AuthenticationError | TransportError> =>
    Effect.gen(function* () {
      if (failure._tag !== "RefreshRejected") return yield* failure
      if (target._tag === "Local") {
        if (failure.rejected !== undefined) yield* memo.remember(failure.rejected)
        return yield* failure.error
      }
      /** Serves a changed entry's token, or renews once with its newer refresh token. */
      const take = (found: Changed) =>
        found._tag === "Serve"
          ? Effect.as(memo.remember(found.token), found.token.accessToken)
          : Effect.zipRight(
              Effect.zipRight(
                memo.remember(found.token),
                Effect.logDebug(`${name}: the token cache holds a newer refresh token (restored); renewing with it`)
              ),
              renewNow(usable, { ...target, expected: Option.some(found.token) }, true)
            )
      // Another process may have renewed with a newer refresh token: ours was then rotated out.
      const other = yield* winnerOfRace(usable, current, target.locked)
      if (Option.isSome(other) && !(again && other.value._tag === "RenewFrom")) return yield* take(other.value)
      if (failure.rejected !== undefined) {
        const marked = yield* writer.mark(target.expected, failure.rejected)
        if (marked._tag === "Refused") {
          const found = yield* changed(marked.now, current, usable)
          if (Option.isSome(found) && !(again && found.value._tag === "RenewFrom")) return yield* take(found.value)
        }
        yield* memo.remember(failure.rejected)
      }
      return yield* failure.error
    })

  /** The renewed token kept: in the memo, and in the entry it replaces (`target`). */
  const renewed = (
    token: TokenInfo,
    usable: (token: TokenInfo) => boolean,
    target: Target
  ): Effect.Effect<Redacted.Redacted<string>, AuthenticationError> => {
    if (target._tag === "Local") {
      memo.keep(token)
      return Effect.succeed(token.accessToken)
    }
    // the token is good even when the cache cannot keep it now: served, and written in the background
    return Effect.flatMap(writer.write(target.expected, token), (outcome) => {
      if (outcome._tag === "Refused") return refused(outcome.now, token, usable)
      memo.keep(token)
      return Effect.succeed(token.accessToken)
    })
  }

  // Written as steps, not a generator, on the path every renewal takes; its continuations update the memo
  // synchronously (each runs once, in the renewing fiber).
  const renewNow = (
    usable: (token: TokenInfo) => boolean,
    target: Target,
    again = false
  ): Effect.Effect<Redacted.Redacted<string>, AuthenticationError | TransportError> =>
    Effect.suspend(() => {
      // an empty entry, read under the lock for this renewal, is a sign-out (here or elsewhere): nothing to renew with
      const current = signedOut(target)
        ? Option.none()
        : Option.map(MutableRef.get(memo.cell).memo, (entry) => entry.token)
      const started = clock.unsafeCurrentTimeMillis()
      return Effect.matchEffect(options.renew(current), {
        onFailure: (failure) => failed(failure, usable, target, current, again),
        onSuccess: (fresh) => {
          const now = clock.unsafeCurrentTimeMillis()
          const token = State.fromRequestStart(fresh, started, now)
          return Effect.zipRight(
            Effect.logDebug(`${name}: token refreshed, expires in ${Math.round(token.expiresAt - now / 1000)} s`),
            renewed(token, usable, target)
          )
        }
      })
    })

  return renewNow
}

const sameAccessToken = (token: TokenInfo, current: Option.Option<TokenInfo>) =>
  Option.exists(current, (known) => Redacted.value(known.accessToken) === Redacted.value(token.accessToken))

/** A token as the shared fleet rules see it. */
const view = (token: TokenInfo) => ({
  expiresAt: token.expiresAt,
  refreshToken: token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken),
  refreshRejected: token.refreshRejected
})
