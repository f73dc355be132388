/**
 * The file cache behind `TokenCache.file` and `TokenStore.directory` (issue 28): every write (`set`, a renewal's
 * `compareAndSet`, an `invalid_grant` mark, `clear`) is a compare-and-set on the entry's version that is atomic on
 * its own (`fileCas.ts`); `withLock` is the lock file (`fileLock.ts`), an optimisation on top; files are read without
 * following links or blocking, in a directory that only we can write (`fileSafety.ts`).
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import { dirname } from "node:path"
import type { ConfigurationError } from "../ServiceError.js"
import { TokenCacheError } from "../ServiceError.js"
import type { TokenCache } from "../TokenCache.js"
import * as Codec from "../TokenCache.js"
import type { TokenInfo } from "../TokenInfo.js"
import * as FileCas from "./fileCas.js"
import * as FileLock from "./fileLock.js"
import * as Safety from "./fileSafety.js"
import { describeCause, safeCause } from "./redact.js"

/** A directory checked once (a store's users share one). */
export interface DirectoryCheck {
  ok: boolean
}

/**
 * A ConfigurationError in a cache operation's channel. The contract types the operations with TokenCacheError only
 * (DESIGN section 3), so it is typed as one; it is a ServiceError all the same (`Effect.catchTag` catches it).
 */
const asCacheError = <A>(self: Effect.Effect<A, TokenCacheError | ConfigurationError>) =>
  self as Effect.Effect<A, TokenCacheError>

const MAX_TRIES = 100

export const makeFile = (
  fs: FileSystem.FileSystem,
  path: string,
  lockOptions: FileLock.FileLockOptions,
  checked: DirectoryCheck = { ok: false }
): TokenCache => {
  const dir = dirname(path)
  const entry = FileCas.make(fs, path, {
    ttlMillis: Math.max(1, Math.round(Duration.toMillis(lockOptions.ttl))),
    waitMillis: Duration.toMillis(lockOptions.wait)
  })

  const error = (what: string) => (cause: unknown) =>
    new TokenCacheError({ message: `${what} ${path}: ${describeCause(cause)}`, cause: safeCause(cause) })

  const checkDir = Effect.suspend(() =>
    checked.ok
      ? Effect.void
      : Effect.tap(Safety.checkDirectory(dir), (found) =>
          Effect.sync(() => {
            checked.ok = found === "checked"
          })
        )
  )
  const ensureDir = Effect.zipRight(
    fs
      .makeDirectory(dir, { recursive: true, mode: 0o700 })
      .pipe(Effect.mapError(error("cannot create the directory of the token cache file"))),
    checkDir
  )

  const decode = (current: FileCas.Current) =>
    current._tag === "File" ? Codec.decodeJson(current.text) : Option.none<TokenInfo>()

  const encode = (token: TokenInfo) =>
    JSON.stringify({ ...JSON.parse(Codec.encodeJson(token)), revision: FileCas.newRevision() })

  // an unreadable file reads as none; a file or directory another user can write is a ConfigurationError
  const get = asCacheError(
    Effect.zipRight(
      checkDir,
      entry.read.pipe(
        Effect.map(decode),
        Effect.catchTag("TokenCacheError", () => Effect.succeed(Option.none<TokenInfo>()))
      )
    )
  )

  /** A directory where the entry should be is never written over nor removed. */
  const notADirectory = (what: string, current: FileCas.Current) =>
    current._tag === "Irregular" && current.kind === "a directory"
      ? Effect.fail(new TokenCacheError({ message: `cannot ${what} the token cache file ${path}: it is a directory` }))
      : Effect.void

  /** Writes `next` when `accept` says yes to what the entry holds; retried when another writer got there first. */
  const write = (accept: (current: FileCas.Current) => Effect.Effect<boolean, TokenCacheError>, next: TokenInfo) =>
    Effect.gen(function* () {
      yield* ensureDir
      for (let tries = 0; tries < MAX_TRIES; tries++) {
        const current = yield* entry.read
        yield* notADirectory("write", current)
        if (!(yield* accept(current))) return false
        if ((yield* entry.replace(current, encode(next))) === "Won") return true
      }
      return yield* new TokenCacheError({
        message: `cannot write the token cache file ${path}: too many concurrent writers`
      })
    })

  const set = (token: TokenInfo) => asCacheError(Effect.asVoid(write(() => Effect.succeed(true), token)))

  const clear = asCacheError(
    Effect.gen(function* () {
      yield* checkDir
      for (let tries = 0; tries < MAX_TRIES; tries++) {
        const current = yield* entry.read
        yield* notADirectory("remove", current)
        if (current._tag === "Missing" || (yield* entry.remove(current)) === "Won") break
      }
      // a sign-out leaves no copy behind: temp files (a writer under way is cancelled)
      yield* entry.sweep(true)
    })
  )

  // The lock is re-entrant for the fiber that holds it (a compare-and-set inside the provider's `withLock`): the
  // fiber carries the id of its hold, and this cache knows which hold is current (a fiber forked inside a hold
  // that has ended takes the lock again).
  const lockFile = FileLock.make(fs, path, lockOptions, { ensureDir, sweep: entry.sweep(false, { republish: true }) })
  const hold = FiberRef.unsafeMake<symbol | undefined>(undefined)
  let current: symbol | undefined
  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.flatMap(FiberRef.get(hold), (mine) =>
      mine !== undefined && mine === current
        ? self
        : (lockFile(
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
          ) as Effect.Effect<A, E | TokenCacheError, R>)
    )

  // Atomic on its own (the version check of fileCas); taken under the lock as well, which spares a waiter the work.
  // A file that is there but is not a regular file is not an empty entry: refused rather than written over.
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    withLock(
      asCacheError(
        write((current) => {
          if (current._tag === "Irregular") {
            return Effect.fail(
              new TokenCacheError({ message: `cannot read the token cache file ${path}: it is ${current.kind}` })
            )
          }
          return Effect.succeed(Codec.sameEntry(expected, decode(current)))
        }, next)
      )
    )

  return { get, set, clear, withLock, compareAndSet } satisfies TokenCache
}
