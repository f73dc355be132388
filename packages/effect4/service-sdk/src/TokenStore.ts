/**
 * A token cache per user, for servers that sign in many users (`UserTokens`): in memory, or one file per user in a
 * directory (the same file names, lock files and format as the Effect 3 line's). `RedisTokenStore` in
 * `@service-sdk/redis` shares them across processes.
 *
 * @since 2.0.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { checkedPath, run } from "./internal/fileProgram.js"
import { userFileName } from "@service-sdk/shared/fileEntry"
import { checkDirectory } from "@service-sdk/shared/fileSafety"
import type { ConfigurationError } from "./ServiceError.js"
import * as TokenCache from "./TokenCache.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The cache of one user's tokens, by user id. Each id has its own entry; no two ids share one.
 *
 * @since 2.0.0
 */
export type TokenStore = (userId: string) => TokenCache.TokenCache

/**
 * Every user's entry in this process's memory (a `Map`); `clear` deletes the user's entry.
 *
 * @since 2.0.0
 */
export const memory = (): Effect.Effect<TokenStore> =>
  Effect.sync(() => {
    const entries = new Map<string, TokenInfo>()
    return (userId: string): TokenCache.TokenCache => ({
      get: Effect.sync(() => Option.fromUndefinedOr(entries.get(userId))),
      set: (token) => Effect.sync(() => void entries.set(userId, token)),
      clear: Effect.sync(() => void entries.delete(userId)),
      compareAndSet: (expected, next) =>
        Effect.sync(() => {
          if (!TokenCache.sameEntry(expected, Option.fromUndefinedOr(entries.get(userId)))) return false
          entries.set(userId, next)
          return true
        })
    })
  })

/**
 * The file name of a user's entry: the hex SHA-256 of the id's UTF-16 code units, so no id leaves the directory.
 *
 * @since 2.0.0
 */
export const fileName = userFileName

/**
 * One `TokenCache.file` per user in `path` (created with mode 0700; files are 0600, written atomically), named by
 * {@link fileName}, each with its own lock file beside it: web-app workers of a cluster share the directory safely.
 *
 * @since 2.0.0
 */
export const directory = (
  path: string,
  options?: TokenCache.FileOptions
): Effect.Effect<TokenStore, ConfigurationError> =>
  Effect.gen(function* () {
    yield* checkedPath("TokenStore.directory", path, "directory")
    const lock = yield* TokenCache.fileLockOptions(options)
    const dir = path.replace(/\/+$/, "")
    // judged now (a ConfigurationError that says why), and again at the first use of its users if it was missing
    const found = yield* Effect.catchTag(
      run(() => checkDirectory(dir)),
      "TokenCacheError",
      () => Effect.succeed("missing" as const)
    )
    // best effort now; each write creates it again if needed (and reports a failure as TokenCacheError)
    yield* Effect.sync(() => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 })
      } catch {}
    })
    const checked = { ok: found === "checked" }
    return (userId: string) => TokenCache.makeFile(join(dir, fileName(userId)), lock, checked)
  })
