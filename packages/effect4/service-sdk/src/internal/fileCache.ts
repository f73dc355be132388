/**
 * The file cache behind `TokenCache.file` and `TokenStore.directory` of this line: the shared file protocol
 * (`shared/fileEntry.ts`, one implementation for both lines) run on `node:fs` (`fileProgram.ts`), with this line's
 * codec and a lock re-entrant for the fiber that holds it. `perform` is how a step runs (the tests make some fail).
 *
 * Imported as `#file-cache`: a browser page gets `internal/browser/fileCache.ts` instead (package.json `imports`, the
 * `browser` condition), so that no Node built-in is on the browser path; what `TokenCache.ts` needs of the file
 * machinery comes through here.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type { TokenCacheError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import type { TokenInfo } from "../TokenInfo.js"
import { operation, run } from "./fileProgram.js"
import * as Codec from "./tokenCodec.js"
import * as FileEntry from "@service-sdk/shared/fileEntry"
import type * as FileLock from "@service-sdk/shared/fileLock"
import type { Op, Program } from "@service-sdk/shared/fileOps"

export { checkedPath, run } from "./fileProgram.js"
export * as FileEntry from "@service-sdk/shared/fileEntry"
export * as FileLock from "@service-sdk/shared/fileLock"
export * as Safety from "@service-sdk/shared/fileSafety"

/** A hold of the lock by a fiber: the lock, and whether the hold has written yet. */
interface Hold {
  readonly held: FileLock.Held
  wrote: boolean
}

export const makeFile = (
  path: string,
  lockOptions: FileLock.FileLockOptions,
  checked: FileEntry.DirectoryCheck = { ok: false },
  perform: (op: Op) => Effect.Effect<unknown, unknown> = operation
): TokenCache => {
  const entry = FileEntry.make(path, lockOptions, checked)
  // A ConfigurationError travels in the operations' TokenCacheError channel (the contract types them so); it is a
  // ServiceError all the same (`Effect.catchTag` catches it).
  const exec = <A>(program: () => Program<A>) => run(program, perform) as Effect.Effect<A, TokenCacheError>
  const decode = (text: string | undefined) => (text === undefined ? Option.none<TokenInfo>() : Codec.decodeJson(text))

  // The lock is re-entrant for the fiber that holds it (a compare-and-set inside the provider's `withLock`): the
  // fiber carries its hold, and this cache knows which hold is current.
  const HoldRef = Context.Reference<Hold | undefined>(`service-sdk/TokenCache.file/${path}/${Math.random()}`, {
    defaultValue: () => undefined
  })
  let current: Hold | undefined
  /** The current hold, when this fiber is inside it. */
  const ownHold = Effect.map(HoldRef, (mine) => (mine !== undefined && mine === current ? mine : undefined))

  // Inside a hold, what is read before the hold's first write is what a renewal decides on (the refresh token it
  // sends): it is vouched for by the lock (still ours after the read), so a holder that lost its lock while paused
  // fails here instead of sending a refresh token another process may have sent (DESIGN section 9, "Locks").
  const get = Effect.flatMap(ownHold, (mine) =>
    Effect.map(mine === undefined || mine.wrote ? exec(entry.get) : exec(() => entry.getHeld(mine.held)), decode)
  )
  /** A write inside a hold: what is read after it is no longer what a renewal decides on. */
  const writing = <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.andThen(
      Effect.map(ownHold, (mine) => {
        if (mine !== undefined) mine.wrote = true
      }),
      self
    )
  const set = (token: TokenInfo) => writing(Effect.asVoid(exec(() => entry.write(Codec.encodeJson(token)))))
  const clear = writing(exec(entry.clear))

  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.flatMap(ownHold, (mine) =>
      mine !== undefined
        ? self
        : Effect.acquireUseRelease(
            exec(entry.lock.acquire),
            (held) =>
              Effect.flatMap(Effect.forkChild(exec(() => entry.lock.heartbeat(held))), (beat) =>
                Effect.ensuring(
                  Effect.andThen(
                    exec(entry.lock.sweep),
                    Effect.suspend(() => {
                      const made: Hold = { held, wrote: false }
                      current = made
                      return Effect.ensuring(
                        Effect.provideService(self, HoldRef, made),
                        Effect.sync(() => {
                          if (current === made) current = undefined
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

  // Atomic on its own (the version check of the shared protocol); taken under the lock as well.
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    withLock(
      writing(exec(() => entry.write(Codec.encodeJson(next), (text) => Codec.sameEntry(expected, decode(text)))))
    )

  return { get, set, clear, withLock, compareAndSet }
}

export { makeFile as makeFileCache }
