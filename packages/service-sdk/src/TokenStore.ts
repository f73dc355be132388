/**
 * A token cache per user, for servers that sign in many users (`UserTokens`): in memory, or one file per user in a
 * directory. `RedisTokenStore` in `@service-sdk/redis` shares them across processes.
 *
 * @since 1.0.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import { checkedPath } from "./internal/fileProgram.js"
import type { ConfigurationError } from "./ServiceError.js"
import * as TokenCache from "./TokenCache.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The cache of one user's tokens, by user id. Each id has its own entry; no two ids share one.
 *
 * @since 1.0.0
 * @category models
 */
export type TokenStore = (userId: string) => TokenCache.TokenCache

/**
 * Every user's entry in this process's memory (a `Map`); `clear` deletes the user's entry.
 *
 * @since 1.0.0
 * @category constructors
 */
export const memory = (): Effect.Effect<TokenStore> =>
  Effect.sync(() => {
    const entries = new Map<string, TokenInfo>()
    return (userId: string): TokenCache.TokenCache => ({
      get: Effect.sync(() => Option.fromNullable(entries.get(userId))),
      set: (token) => Effect.sync(() => void entries.set(userId, token)),
      clear: Effect.sync(() => void entries.delete(userId)),
      compareAndSet: (expected, next) =>
        Effect.sync(() => {
          if (!TokenCache.sameEntry(expected, Option.fromNullable(entries.get(userId)))) return false
          entries.set(userId, next)
          return true
        })
    })
  })

/**
 * The file name of a user's entry: the hex SHA-256 of the id's UTF-16 code units. Fixed length, only `[0-9a-f]`, so
 * no id (`../x`, `a/b`, `.`, empty, huge, non-ASCII) leaves the directory, and distinct ids get distinct names (UTF-16,
 * not UTF-8: UTF-8 would map every lone surrogate to U+FFFD, and two ids to one file).
 *
 * @since 1.0.0
 * @category utils
 */
export const fileName = (userId: string): string =>
  `${createHash("sha256").update(userId, "utf16le").digest("hex")}.json`

/**
 * One `TokenCache.file` per user in `path` (created with mode 0700; files are 0600, written atomically), named by
 * {@link fileName}, each with its own lock file beside it (`withLock` and `compareAndSet` across the processes of
 * one machine: web-app workers of a cluster share the directory safely; every write is a compare-and-set that is
 * atomic on its own). A missing or unreadable file reads as none; `clear` removes the user's file and any temp file
 * of it. An empty path or the file system root is a ConfigurationError, and so is a directory that another user owns
 * or can write (at the first use). `options` as `TokenCache.file`.
 *
 * @since 1.0.0
 * @category constructors
 */
export function directory(path: string): Effect.Effect<TokenStore, never, FileSystem.FileSystem>
export function directory(
  path: string,
  options: TokenCache.FileOptions
): Effect.Effect<TokenStore, ConfigurationError, FileSystem.FileSystem>
export function directory(
  path: string,
  options?: TokenCache.FileOptions
): Effect.Effect<TokenStore, ConfigurationError, FileSystem.FileSystem> {
  return Effect.gen(function* () {
    yield* checkedPath("TokenStore.directory", path, "directory")
    const lock = yield* TokenCache.fileLockOptions(options)
    const fs = yield* FileSystem.FileSystem
    const dir = path.replace(/\/+$/, "")
    // best effort now; each write creates it again if needed (and reports a failure as TokenCacheError)
    yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 }).pipe(Effect.ignore)
    // the directory is checked once for all its users (a ConfigurationError at their first use when others can write it)
    const checked = { ok: false }
    return (userId: string) => TokenCache.makeFile(fs, `${dir}/${fileName(userId)}`, lock, checked)
  })
}
