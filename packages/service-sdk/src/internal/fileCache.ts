/**
 * The file cache behind `TokenCache.file` and `TokenStore.directory`: the shared file protocol
 * (`shared/fileEntry.ts`, one implementation for both lines: every write a compare-and-set atomic on its own, the
 * lock file an optimisation on top, hostile files refused) run on this line's `FileSystem` (`fileProgram.ts`), with
 * this line's codec and a lock re-entrant for the fiber that holds it.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type { TokenCacheError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import * as Codec from "../TokenCache.js"
import type { TokenInfo } from "../TokenInfo.js"
import { run } from "./fileProgram.js"
import * as FileEntry from "@service-sdk/shared/fileEntry"
import type { Program } from "@service-sdk/shared/fileOps"

/** A directory checked once (a store's users share one). */
export type DirectoryCheck = FileEntry.DirectoryCheck

/** How the lock file behaves. */
export interface FileLockOptions {
  /** How long a lock outlives a holder that stopped keeping it alive (default 10 s). */
  readonly ttl: Duration.Duration
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly wait: Duration.Duration
}

export const defaultLockOptions: FileLockOptions = { ttl: Duration.seconds(10), wait: Duration.seconds(30) }

export const makeFile = (
  fs: FileSystem.FileSystem,
  path: string,
  lockOptions: FileLockOptions,
  checked: DirectoryCheck = { ok: false }
): TokenCache => {
  const entry = FileEntry.make(
    path,
    { ttlMillis: Duration.toMillis(lockOptions.ttl), waitMillis: Duration.toMillis(lockOptions.wait) },
    checked
  )
  /**
   * A ConfigurationError in a cache operation's channel. The contract types the operations with TokenCacheError
   * only (DESIGN section 3), so it is typed as one; it is a ServiceError all the same (`Effect.catchTag` catches it).
   */
  const exec = <A>(program: () => Program<A>) => run(fs, program) as Effect.Effect<A, TokenCacheError>

  const decode = (text: string | undefined) => (text === undefined ? Option.none<TokenInfo>() : Codec.decodeJson(text))

  const get = Effect.map(exec(entry.get), decode)
  const set = (token: TokenInfo) => Effect.asVoid(exec(() => entry.write(Codec.encodeJson(token))))
  const clear = exec(entry.clear)

  // The lock is re-entrant for the fiber that holds it (a compare-and-set inside the provider's `withLock`): the
  // fiber carries the id of its hold, and this cache knows which hold is current (a fiber forked inside a hold
  // that has ended takes the lock again).
  const hold = FiberRef.unsafeMake<symbol | undefined>(undefined)
  let current: symbol | undefined
  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.flatMap(FiberRef.get(hold), (mine) =>
      mine !== undefined && mine === current
        ? self
        : Effect.acquireUseRelease(
            exec(entry.lock.acquire),
            (held) =>
              Effect.flatMap(Effect.fork(exec(() => entry.lock.heartbeat(held))), (beat) =>
                Effect.ensuring(
                  Effect.zipRight(
                    exec(entry.lock.sweep),
                    Effect.suspend(() => {
                      const id = Symbol(path)
                      current = id
                      return Effect.ensuring(
                        Effect.locally(self, hold, id),
                        Effect.sync(() => {
                          if (current === id) current = undefined
                        })
                      )
                    })
                  ),
                  Fiber.interrupt(beat)
                )
              ),
            (held) => Effect.ignore(exec(() => entry.lock.release(held)))
          )
    )

  // Atomic on its own (the version check of the shared protocol); taken under the lock as well, which spares a
  // waiter the work.
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    withLock(exec(() => entry.write(Codec.encodeJson(next), (text) => Codec.sameEntry(expected, decode(text)))))

  return { get, set, clear, withLock, compareAndSet } satisfies TokenCache
}
