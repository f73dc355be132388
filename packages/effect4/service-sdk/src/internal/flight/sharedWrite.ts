/**
 * Every write of a renewal or of an `invalid_grant` mark to the shared cache: through `compareAndSet` when the cache
 * has it (the write lands only if the entry is unchanged since the renewal read it), else `set`. A write that failed
 * (the cache unreachable) is retried in the background, in the provider's scope, until it lands or a newer entry is
 * there: a rotated refresh token never lives only in this process's memory.
 */
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import * as State from "./state.js"
import { unwrittenRetryPauseMillis } from "@service-sdk/shared/fleetRules"

/** What became of a write: it landed, it is being retried in the background, or the entry had changed (`now`). */
export type Written =
  | { readonly _tag: "Written" }
  | { readonly _tag: "Retrying"; readonly error: TokenCacheError }
  | { readonly _tag: "Refused"; readonly now: Option.Option<TokenInfo> }

const written: Written = { _tag: "Written" }

export interface SharedWrite {
  /** Writes `next` over `expected` (the entry as the renewal read it); a refused write reads the entry there now. */
  readonly write: (expected: Option.Option<TokenInfo>, next: TokenInfo) => Effect.Effect<Written>
  /**
   * Writes an `invalid_grant` mark over `expected`, once (a mark that cannot be written is only logged); when the
   * entry had changed, the entry there now, else none.
   */
  readonly mark: (expected: Option.Option<TokenInfo>, marked: TokenInfo) => Effect.Effect<Option.Option<TokenInfo>>
}

export const make = (options: {
  readonly name: string
  readonly cache: TokenCache
  readonly cell: State.Cell
  /** Where the background tries run: interrupted when it closes. */
  readonly scope: Scope.Scope
  readonly accepts: (token: TokenInfo) => boolean
}): SharedWrite => {
  const { accepts, cache, cell, name } = options
  const compareAndSet =
    cache.compareAndSet ?? ((_: Option.Option<TokenInfo>, next: TokenInfo) => Effect.as(cache.set(next), true))

  /**
   * A write that failed (the cache unreachable), tried again until it lands, or the entry holds a newer token, or a
   * newer renewal of this process replaced it.
   */
  const retry = (initial: Option.Option<TokenInfo>, token: TokenInfo) =>
    Effect.gen(function* () {
      let expected = initial
      // tried for as long as the cache cannot be reached (DESIGN section 4); an older entry is written over 20 times
      for (let attempt = 0, olderSeen = 0; ; attempt++) {
        yield* Effect.sleep(unwrittenRetryPauseMillis(attempt))
        if (MutableRef.get(cell).memo?.token !== token) return
        const written = yield* Effect.result(compareAndSet(expected, token))
        if (written._tag === "Failure") continue
        if (written.success) return yield* Effect.logInfo(`${name}: the renewed token reached the token cache`)
        const now = yield* Effect.orElseSucceed(cache.get, () => Option.none<TokenInfo>())
        // an older entry of ours (a store that lost writes) is written over; a newer one wins
        if (Option.isSome(now) && accepts(now.value) && now.value.expiresAt < token.expiresAt && olderSeen++ < 20) {
          expected = now
          continue
        }
        return yield* Effect.logInfo(`${name}: the token cache holds a newer entry; the renewed token is not written`)
      }
    })

  const write = (expected: Option.Option<TokenInfo>, next: TokenInfo): Effect.Effect<Written> =>
    Effect.gen(function* () {
      const outcome = yield* Effect.result(compareAndSet(expected, next))
      if (outcome._tag === "Failure") {
        yield* Effect.logWarning(
          `${name}: the new token was not cached (${outcome.failure.message}); retrying in the background until it is`
        )
        // a rotated refresh token must not live only in this process's memory
        State.update(cell, () => ({ unwritten: next }))
        yield* Effect.forkIn(
          Effect.ensuring(
            retry(expected, next),
            Effect.sync(() => State.update(cell, (state) => (state.unwritten === next ? { unwritten: undefined } : {})))
          ),
          options.scope
        )
        return { _tag: "Retrying", error: outcome.failure } satisfies Written
      }
      if (outcome.success) return written
      const now = yield* Effect.orElseSucceed(cache.get, () => Option.none<TokenInfo>())
      return { _tag: "Refused", now } satisfies Written
    })

  const mark = (expected: Option.Option<TokenInfo>, marked: TokenInfo): Effect.Effect<Option.Option<TokenInfo>> =>
    Effect.gen(function* () {
      const outcome = yield* Effect.result(compareAndSet(expected, marked))
      if (outcome._tag === "Failure") {
        yield* Effect.logWarning(`${name}: cannot record the rejected refresh token: ${outcome.failure.message}`)
        return Option.none()
      }
      if (outcome.success) return Option.none()
      return yield* Effect.orElseSucceed(cache.get, () => Option.none<TokenInfo>())
    })

  return { write, mark }
}
