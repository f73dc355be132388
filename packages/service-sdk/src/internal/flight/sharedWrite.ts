/**
 * Every write of a renewal or of an `invalid_grant` mark to the shared cache: through `compareAndSet` when the cache
 * has it (the write lands only if the entry is unchanged since the renewal read it), else `set`. A write that failed
 * (the cache unreachable) is retried in the background, in the provider's scope, until it lands or a newer entry is
 * there: a rotated refresh token never lives only in this process's memory.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import type { TokenInfo } from "../../TokenInfo.js"
import { unwrittenRetryPauseMillis } from "@service-sdk/shared/fleetRules"
import * as State from "./state.js"

/** What became of a write: it landed, it is being retried in the background, or the entry had changed (`now`). */
export type Written =
  | { readonly _tag: "Written" }
  | { readonly _tag: "Retrying"; readonly error: TokenCacheError }
  | { readonly _tag: "Refused"; readonly now: Option.Option<TokenInfo> }
  | { readonly _tag: "Failed"; readonly error: TokenCacheError }

const written: Written = { _tag: "Written" }

export interface SharedWrite {
  /** Writes `next` over `expected` (the entry as the renewal read it). */
  readonly write: (expected: Option.Option<TokenInfo>, next: TokenInfo) => Effect.Effect<Written>
  /** Writes an `invalid_grant` mark over `expected`, once (a mark that cannot be written is only logged). */
  readonly mark: (expected: Option.Option<TokenInfo>, marked: TokenInfo) => Effect.Effect<Written>
}

export const make = (options: {
  readonly name: string
  readonly cache: TokenCache
  readonly cell: State.Cell
  readonly scope: Scope.Scope
  /** What an empty entry means (see the single flight's `entryGone`). */
  readonly entryGone: "signedOut" | "keep"
}): SharedWrite => {
  const { cache, cell, name } = options
  const compareAndSet =
    cache.compareAndSet ?? ((_expected: Option.Option<TokenInfo>, next: TokenInfo) => Effect.as(cache.set(next), true))

  const once = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    Effect.flatMap(compareAndSet(expected, next), (landed) =>
      landed
        ? Effect.succeed(written)
        : Effect.map(
            Effect.orElseSucceed(cache.get, () => Option.none<TokenInfo>()),
            (now): Written => ({ _tag: "Refused", now })
          )
    )

  /**
   * Retries until the write lands, or the entry holds a newer token or was signed out. An entry that went back to an
   * older token meanwhile (a failover that lost writes), or vanished from a store where that is no sign-out, is
   * written over: our token is the newest of its chain.
   */
  const retry = (initial: Option.Option<TokenInfo>, next: TokenInfo) =>
    Effect.gen(function* () {
      let expected = initial
      for (let attempt = 0; ; attempt++) {
        yield* Effect.sleep(Duration.millis(unwrittenRetryPauseMillis(attempt)))
        if (MutableRef.get(cell).unwritten !== next) return
        const outcome = yield* Effect.either(once(expected, next))
        if (outcome._tag === "Left") continue
        if (outcome.right._tag === "Refused") {
          const now = outcome.right.now
          const older = Option.isSome(now) ? now.value.expiresAt < next.expiresAt : options.entryGone === "keep"
          if (older && attempt < 20) {
            expected = now
            continue
          }
        }
        State.update(cell, (state) => (state.unwritten === next ? { unwritten: undefined } : {}))
        return yield* outcome.right._tag === "Written"
          ? Effect.logInfo(`${name}: the renewed token reached the token cache`)
          : Effect.logInfo(`${name}: the token cache holds a newer entry; the renewed token is not written`)
      }
    })

  const write = (expected: Option.Option<TokenInfo>, next: TokenInfo): Effect.Effect<Written> =>
    Effect.catchAll(once(expected, next), (error) =>
      Effect.gen(function* () {
        State.update(cell, () => ({ unwritten: next }))
        yield* Effect.logWarning(
          `${name}: the new token was not cached (${error.message}); retrying in the background until it is`
        )
        yield* Effect.forkIn(retry(expected, next), options.scope)
        return { _tag: "Retrying", error } satisfies Written
      })
    )

  const mark = (expected: Option.Option<TokenInfo>, marked: TokenInfo): Effect.Effect<Written> =>
    Effect.catchAll(once(expected, marked), (error) =>
      Effect.as(Effect.logWarning(`${name}: cannot record the rejected refresh token: ${error.message}`), {
        _tag: "Failed",
        error
      } satisfies Written)
    )

  return { write, mark }
}
