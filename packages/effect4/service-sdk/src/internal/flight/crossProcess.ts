/**
 * Obtaining a token in the flight's turn (`join.ts`: this process's lock), from the memo, the shared cache, then, when
 * the cache has `withLock`, the lock shared by every process using it, the cache once more, and at last a renewal.
 * When the cache cannot be reached, the degraded mode: renew in this process alone (client credentials) or fail.
 */
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { VANISHED_ENTRY_GRACE_MILLIS } from "@service-sdk/shared/fleetRules"
import type { Memo } from "./memo.js"
import type { Target } from "./renewal.js"
import * as State from "./state.js"

/** The wait for an entry gone under a holder of a refresh token (`shared/fleetRules.ts`, one rule for both lines). */
export { VANISHED_ENTRY_GRACE_MILLIS }

const local: Target = { _tag: "Local" }

export const make = (options: {
  readonly name: string
  readonly cache: TokenCache
  readonly memo: Memo
  readonly renewNow: (
    usable: (token: TokenInfo) => boolean,
    target: Target
  ) => Effect.Effect<Redacted.Redacted<string>, State.TokenFailure>
  readonly whenCacheDown: "local" | "fail"
  readonly entryGone: "signedOut" | "keep"
}) => {
  const { cache, memo, name, renewNow } = options

  /** The cache cannot be reached: renew in this process alone, or fail, as the provider asked. */
  const degraded = (
    error: TokenCacheError,
    usable: (token: TokenInfo) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> =>
    options.whenCacheDown !== "local" || cache.withLock === undefined
      ? Effect.fail(error)
      : Effect.gen(function* () {
          if (!MutableRef.get(memo.cell).cacheDown) {
            State.update(memo.cell, () => ({ cacheDown: true }))
            yield* Effect.logWarning(
              `${name}: the token cache cannot be reached (${error.message}); renewing in this process until it answers`
            )
          }
          const memoized = yield* memo.usableNow(usable)
          if (Option.isSome(memoized)) return memoized.value
          return yield* renewNow(usable, local)
        })

  /** Whether an empty entry should be waited for: we hold a refresh token no write of ours is pending for. */
  const vanishedUnderUs = (found: Option.Option<TokenInfo>) => {
    const state = MutableRef.get(memo.cell)
    return (
      options.entryGone === "keep" &&
      Option.isNone(found) &&
      state.unwritten === undefined &&
      state.memo?.token.refreshToken !== undefined
    )
  }

  /** Runs in the flight's turn (`join.ts`), never two at once: its first look at the memo is under the local lock. */
  const obtain = (
    usable: (token: TokenInfo) => boolean
  ): Effect.Effect<Redacted.Redacted<string>, State.TokenFailure> =>
    Effect.gen(function* () {
      const memoized = yield* memo.usableNow(usable)
      if (Option.isSome(memoized)) return memoized.value
      const read = yield* Effect.result(memo.readCache)
      if (read._tag === "Failure") return yield* degraded(read.failure, usable)
      if (MutableRef.get(memo.cell).cacheDown) {
        State.update(memo.cell, () => ({ cacheDown: false }))
        yield* Effect.logInfo(`${name}: the token cache answers again; renewals are shared again`)
      }
      const cached = yield* memo.usableNow(usable)
      if (Option.isSome(cached)) return cached.value
      const withLock = cache.withLock
      if (withLock === undefined)
        return yield* renewNow(usable, { _tag: "Shared", expected: read.success, locked: false })
      const underLock = (mayWait: boolean) =>
        Effect.gen(function* () {
          // another process may have renewed while we waited for the cross-process lock
          const found = yield* memo.readCache
          const shared = yield* memo.usableNow(usable)
          if (Option.isSome(shared)) return Option.some(shared.value)
          if (mayWait && vanishedUnderUs(found)) return Option.none()
          return Option.some(yield* renewNow(usable, { _tag: "Shared", expected: found, locked: true }))
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

  return obtain
}
