/**
 * Where providers keep their token: in memory (the default), in a file (command-line use), or in a shared store such
 * as Redis (see `@service-sdk/redis`) whose `withLock` makes renewal single-flight across processes.
 *
 * @since 1.0.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Duration from "effect/Duration"
import * as Ref from "effect/Ref"
import { writeFileAtomic } from "./internal/atomicWrite.js"
import * as Config from "./internal/config.js"
import * as FileCache from "./internal/fileCache.js"
import * as Codec from "./internal/tokenCodec.js"
import { checkedPath } from "./internal/fileProgram.js"
import { describeCause, safeCause } from "@service-sdk/shared/redact"
import * as Safety from "@service-sdk/shared/fileSafety"
import { type ConfigurationError, TokenCacheError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The cache protocol every provider reads and writes: `get`, `set`, and optionally `clear`, and, for a cache that
 * several processes share, `withLock` and `compareAndSet`. The guarantees are declared, not special cases: a
 * provider runs its renewal under `withLock` when the cache has it, and makes every write of a renewal, of an
 * `invalid_grant` mark or of a sign-out through `compareAndSet` when the cache has it. A cache of your own that
 * declares both members gets exactly the guarantees of the SDK's shared caches.
 *
 * @since 1.0.0
 * @category models
 */
export interface TokenCache {
  readonly get: Effect.Effect<Option.Option<TokenInfo>, TokenCacheError>
  readonly set: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Runs `self` while holding a lock shared by every process using this cache (cross-process single flight). */
  readonly withLock?: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | TokenCacheError, R>
  /**
   * Forgets the entry (sign-out). Optional; memory, file and Redis caches have it.
   *
   * @since 1.0.0
   */
  readonly clear?: Effect.Effect<void, TokenCacheError>
  /**
   * Writes `next` only if the entry still holds `expected` (the same access token and refresh token, see
   * {@link sameEntry}; a `refresh_rejected` mark added since does not count as a change) or, for `Option.none()`,
   * holds nothing; `true` when written. Atomic against every other writer of the entry, in every process.
   *
   * @since 1.0.0
   */
  readonly compareAndSet?: (
    expected: Option.Option<TokenInfo>,
    next: TokenInfo
  ) => Effect.Effect<boolean, TokenCacheError>
}

/**
 * The comparison of `compareAndSet`: whether the entry `current` still is `expected`. `Option.none()` matches only
 * an empty entry; a token matches an entry with the same access token and the same refresh token (or both none),
 * whatever else changed (a `refresh_rejected` mark, an expiry).
 *
 * @since 1.0.0
 * @category utils
 */
export const sameEntry: (expected: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>) => boolean =
  Codec.sameEntry

/**
 * The default cache: a `Ref` in this process (its `compareAndSet` is trivially atomic).
 *
 * @since 1.0.0
 * @category constructors
 */
export const memory = (initial?: TokenInfo): Effect.Effect<TokenCache> =>
  Effect.map(Ref.make(Option.fromNullable(initial)), (ref) => ({
    get: Ref.get(ref),
    set: (token) => Ref.set(ref, Option.some(token)),
    clear: Ref.set(ref, Option.none()),
    compareAndSet: (expected, next) =>
      Ref.modify(ref, (current) => (sameEntry(expected, current) ? [true, Option.some(next)] : [false, current]))
  }))

/**
 * Reads a cache entry leniently: anything but an object with a non-empty string `access_token` and a finite
 * `expires_at` is none; an ill-typed optional field reads as absent.
 *
 * @since 1.0.0
 * @category codecs
 */
export const decodeJson: (text: string) => Option.Option<TokenInfo> = Codec.decodeJson

/**
 * The JSON text a shared cache stores: `{ access_token, expires_at, refresh_token?, scope? }` and, when the token
 * has them, `client_id`, `auth_url`, `issued_at`, `refresh_rejected`, `signed_in_at`, `sign_in_ends_at`.
 *
 * @since 1.0.0
 * @category codecs
 */
export const encodeJson: (token: TokenInfo) => string = Codec.encodeJson

/**
 * The options of {@link file} and `TokenStore.directory`: how the lock file behaves.
 *
 * @since 1.0.0
 * @category options
 */
export interface FileOptions {
  /**
   * How long a lock file outlives a holder that stopped keeping it alive, e.g. a frozen process (default 10 s). It is
   * written in the lock: a waiter honours its holder's TTL (up to 5 minutes), so processes with different values
   * still make one renewal per expiry.
   */
  readonly lockTtl?: Duration.DurationInput | undefined
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly lockWait?: Duration.DurationInput | undefined
}

/**
 * The lock options of {@link FileOptions}, checked: positive and finite, else a ConfigurationError naming the option.
 *
 * @since 1.0.0
 * @category utils
 */
export const fileLockOptions = (options: FileOptions | undefined) =>
  Effect.gen(function* () {
    const check = (value: Duration.DurationInput | undefined, fallback: Duration.Duration, option: string) =>
      durationOption(value, { option, fallback, maxMillis: 2 ** 31 - 1 })
    return {
      ttl: yield* check(options?.lockTtl, FileCache.defaultLockOptions.ttl, "lockTtl"),
      wait: yield* check(options?.lockWait, FileCache.defaultLockOptions.wait, "lockWait")
    } satisfies FileCache.FileLockOptions
  })

/**
 * Writes `text` to the file at `path` atomically: an exclusive temp file beside it, mode 0600, renamed over it (a
 * link there is replaced, never followed), in a parent directory created 0700. For files a tool keeps beside its
 * token cache (the CLI's saved login).
 *
 * @since 1.0.0
 * @category files
 */
export const writeFile = (path: string, text: string): Effect.Effect<void, TokenCacheError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => writeFileAtomic(fs, path, text)).pipe(
    Effect.mapError(
      (cause) =>
        new TokenCacheError({ message: `cannot write ${path}: ${describeCause(cause)}`, cause: safeCause(cause) })
    )
  )

/**
 * The SDK's one rule for duration options, for caches of your own (`@service-sdk/redis` uses it): negative, NaN,
 * infinite, unreadable or out-of-range values are a ConfigurationError naming the option, never clamped.
 *
 * @since 1.0.0
 * @category options
 */
export const durationOption: typeof Config.durationOption = Config.durationOption

/**
 * A cache in a JSON file, for command-line tools and for the processes of one machine. Every write (`set`,
 * `compareAndSet`, `clear`) is a compare-and-set on the entry's version that is atomic on its own, whatever any lock
 * did: two writers that expected the same entry never both win. Writes are atomic (a temp file renamed over the
 * target) with mode 0600 in a parent directory it creates (0700); a missing, unreadable or invalid file reads as
 * none. Files are read without following links or blocking; a directory or file that another user owns or can
 * write is a ConfigurationError (as are an empty path and the file system root). `withLock` holds the lock file
 * `<path>.lock` (created exclusively with an owner and an expiry, kept alive while held, taken over when its holder
 * is provably gone or stopped keeping it alive for the TTL it wrote; a holder that lost it while paused fails its
 * renewal before sending the refresh token it read). The directory is judged where the path resolves (links
 * followed). An entry over 1 MiB is refused when written (TokenCacheError). The file system must make hard links
 * (every write is one); where it does not (FAT, some SMB or FUSE mounts) writes fail with a TokenCacheError that
 * says so, and `clear` still removes the entry: several CLI invocations, cron jobs or workers sharing the file make
 * one renewal per expiry. Temp files left by a crash are swept under the lock and by `clear`.
 *
 * @since 1.0.0
 * @category constructors
 */
export function file(path: string): Effect.Effect<TokenCache, never, FileSystem.FileSystem>
export function file(
  path: string,
  options: FileOptions
): Effect.Effect<TokenCache, ConfigurationError, FileSystem.FileSystem>
export function file(
  path: string,
  options?: FileOptions
): Effect.Effect<TokenCache, ConfigurationError, FileSystem.FileSystem> {
  return Effect.flatMap(checkedPath("TokenCache.file", path, "file"), () =>
    Effect.flatMap(fileLockOptions(options), (lock) =>
      Effect.map(FileSystem.FileSystem, (fs) => makeFile(fs, path, lock))
    )
  )
}

/**
 * What to do with a token directory that other users may write or own: "ok"; "tighten" (it is ours: chmod 700 it,
 * as the CLI does); "refuse" (another user's, or a shared directory such as /tmp). The check the file caches make
 * (where "tighten" is refused too, with the fix in the message) and the CLI makes.
 *
 * @since 1.0.0
 * @category files
 */
export const directoryVerdict: (
  stat: { readonly mode: number; readonly uid: number },
  uid: number | undefined
) => "ok" | "tighten" | "refuse" = Safety.directoryVerdict

/**
 * Why {@link directoryVerdict} did not say "ok", in words (with the directory's mode or owner).
 *
 * @since 1.0.0
 * @category files
 */
export const directoryProblem: (
  stat: { readonly mode: number; readonly uid: number },
  uid: number | undefined
) => string = Safety.directoryProblem

/**
 * A file cache over `fs`, made synchronously (`TokenStore.directory` makes one per user on demand). `checked` is
 * the memo of the directory check, shared by the caches of one directory.
 *
 * @since 1.0.0
 * @category constructors
 */
export const makeFile = (
  fs: FileSystem.FileSystem,
  path: string,
  lockOptions: FileCache.FileLockOptions,
  checked?: FileCache.DirectoryCheck
): TokenCache => FileCache.makeFile(fs, path, lockOptions, checked)
