/**
 * One renewal: `renew` with the newest token known, then the new token written over the entry the renewal read.
 * When the entry changed meanwhile (the write is refused), the newer entry is served: the loser of a rotation race
 * serves the winner's token. On `invalid_grant`, the entry is read again (another process may have rotated the
 * refresh token): its fresh token is served, a newer refresh token of ours found there is renewed with (once), and
 * else the rejected refresh token is marked in the entry it came from, never over a newer one.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AuthenticationError, type TransportError } from "../../ServiceError.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { sleepOnLiveClock } from "../liveServices.js"
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

export type Renew = (
  current: Option.Option<TokenInfo>
) => Effect.Effect<TokenInfo, AuthenticationError | TransportError | RefreshRejected>

/** What the entry holds after our `invalid_grant`: a token to serve, or a newer refresh token of ours to renew with. */
type Changed =
  | { readonly _tag: "Serve"; readonly token: TokenInfo }
  | { readonly _tag: "RenewFrom"; readonly token: TokenInfo }

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
  readonly skewMillis: number
  readonly memo: Memo
  readonly writer: SharedWrite
  readonly renew: Renew
  readonly accepts: (token: TokenInfo) => boolean
  /** "signedOut": a renewal that finds the entry emptied meanwhile does not write it back (a sign-out elsewhere). */
  readonly entryGone: "signedOut" | "keep"
}) => {
  const { accepts, memo, name, skewMillis, writer } = options

  const fresh = (token: TokenInfo, now: number) =>
    token.refreshRejected !== true && now < State.staleAt(token, skewMillis)

  /** The entry, when it is this provider's, fresh and `usable`: served instead of ours. */
  const servable = (entry: Option.Option<TokenInfo>, usable: (token: TokenInfo) => boolean) =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      Option.filter(entry, (token) => accepts(token) && fresh(token, now) && usable(token))
    )

  /** Writes `token` over `expected`; a refused write serves the newer entry, or ours over an older one of ours. */
  const writeRenewed = (
    expected: Option.Option<TokenInfo>,
    token: TokenInfo,
    usable: (token: TokenInfo) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, AuthenticationError> =>
    Effect.gen(function* () {
      let against = expected
      for (let attempt = 0; attempt < 3; attempt++) {
        // a write that failed is retried in the background: the token is good, and served meanwhile
        const written = yield* writer.write(against, token)
        if (written._tag !== "Refused") break
        const now = written.now
        const newer = yield* servable(now, usable)
        if (Option.isSome(newer)) {
          memo.remember(newer.value)
          yield* Effect.logDebug(`${name}: another process renewed first; serving its token`)
          return newer.value.accessToken
        }
        if (Option.isNone(now) && options.entryGone === "signedOut") {
          // a sign-out elsewhere while we renewed: it wins (neither written back nor served)
          memo.forget()
          return yield* new AuthenticationError({
            message: "not signed in: the token was signed out while it was being renewed (sign in again)"
          })
        }
        // an older token of ours (a stale or marked entry, a store that lost writes): ours is newer
        if (Option.isSome(now) && !(accepts(now.value) && now.value.expiresAt < token.expiresAt)) {
          yield* Effect.logWarning(`${name}: the token cache holds another token; the renewed one is not written`)
          break
        }
        against = now
      }
      memo.remember(token)
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
      if (Option.isSome(other) && !Option.exists(current, (t) => State.same(t.accessToken, other.value.accessToken))) {
        return Option.some({ _tag: "Serve", token: other.value })
      }
      return Option.map(newerRefreshToken(now, current), (token) => ({ _tag: "RenewFrom", token }) as const)
    })

  /**
   * The token of a renewal elsewhere that rotated ours out, the entry read for up to 0.5 s, 2.5 s
   * under a lock (`racePausesMillis`, `shared/fleetRules.ts`).
   */
  const winnerOfRace = (usable: (token: TokenInfo) => boolean, current: Option.Option<TokenInfo>, locked: boolean) =>
    Effect.gen(function* () {
      const pauses = racePausesMillis(locked)
      for (let attempt = 0; attempt <= pauses.length; attempt++) {
        // the other process writes in real time: this pause is on the live clock whatever clock the provider has
        if (attempt > 0) yield* sleepOnLiveClock(pauses[attempt - 1]!)
        const now = yield* Effect.orElseSucceed(memo.readCache, () => Option.none<TokenInfo>())
        const found = yield* changed(now, current, usable)
        if (Option.isSome(found)) return found
      }
      return Option.none<Changed>()
    })

  /** Whether the renewal's entry is gone from a store where that means a sign-out (`entryGone: "signedOut"`). */
  const signedOut = (target: Target) =>
    options.entryGone === "signedOut" && target._tag === "Shared" && Option.isNone(target.expected)

  const renewNow = (
    usable: (token: TokenInfo) => boolean,
    target: Target,
    again = false
  ): Effect.Effect<Redacted.Redacted<string>, AuthenticationError | TransportError> =>
    Effect.gen(function* () {
      // an empty entry, read under the lock for this renewal, is a sign-out (here or elsewhere): nothing to renew with
      const current = signedOut(target) ? Option.none() : Option.fromUndefinedOr(MutableRef.get(memo.cell).memo?.token)
      const started = yield* Clock.currentTimeMillis
      const renewed = yield* Effect.result(options.renew(current))
      if (renewed._tag === "Failure") {
        const failure = renewed.failure
        if (failure._tag !== "RefreshRejected") return yield* Effect.fail(failure)
        if (target._tag === "Shared") {
          /** Serves a changed entry's token, or renews once with its newer refresh token. */
          const take = (found: Changed) => {
            memo.remember(found.token)
            return found._tag === "Serve"
              ? Effect.succeed(found.token.accessToken)
              : Effect.andThen(
                  Effect.logDebug(`${name}: the token cache holds a newer refresh token (restored); renewing with it`),
                  renewNow(usable, { ...target, expected: Option.some(found.token) }, true)
                )
          }
          // another process may have renewed with a newer refresh token: ours was then rotated out, and the winner
          // may still be writing its token (no lock, or a lock lost in a failover): read a few times
          const other = yield* winnerOfRace(usable, current, target.locked)
          if (Option.isSome(other) && !(again && other.value._tag === "RenewFrom")) return yield* take(other.value)
          if (failure.rejected !== undefined) {
            // a mark is never written over a newer entry: that entry is the winner's, served instead (SF4)
            const now = yield* writer.mark(target.expected, failure.rejected)
            const found = yield* changed(now, current, usable)
            if (Option.isSome(found) && !(again && found.value._tag === "RenewFrom")) return yield* take(found.value)
          }
        }
        if (failure.rejected !== undefined) memo.remember(failure.rejected)
        return yield* Effect.fail(failure.error)
      }
      const now = yield* Clock.currentTimeMillis
      const token = State.fromRequestStart(renewed.success, started, now)
      yield* Effect.logDebug(`${name}: token refreshed, expires in ${Math.round(token.expiresAt - now / 1000)} s`)
      if (target._tag === "Local") {
        memo.remember(token)
        return token.accessToken
      }
      return yield* writeRenewed(target.expected, token, usable)
    })

  return renewNow
}

/** A token as the shared fleet rules see it. */
const view = (token: TokenInfo) => ({
  expiresAt: token.expiresAt,
  refreshToken: token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken),
  refreshRejected: token.refreshRejected
})
