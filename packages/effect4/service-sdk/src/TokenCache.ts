/**
 * Where providers keep their token: in memory (the default), in a file (command-line use, the processes of one
 * machine), or in a shared store such as Redis (`@service-sdk/redis`).
 *
 * @since 2.0.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { nonNegativeDuration } from "./internal/config.js"
// the file machinery, or in a browser page its stand-in (package.json "imports": the `browser` condition)
import { checkedPath, FileEntry, FileLock, makeFileCache, run, Safety } from "#file-cache"
import * as BrowserCache from "./internal/browser/tokenCache.js"
import * as Codec from "./internal/tokenCodec.js"
import type { DirectoryCheck } from "@service-sdk/shared/fileEntry"
import type { FileLockOptions } from "@service-sdk/shared/fileLock"
import { ConfigurationError, type TokenCacheError } from "./ServiceError.js"
import type { TokenInfo } from "./TokenInfo.js"

/**
 * The cache protocol every provider reads and writes: `get`, `set`, and optionally `clear`, and, for a cache that
 * several processes share, `withLock` and `compareAndSet`. The guarantees are declared, not special cases: a
 * provider runs its renewal under `withLock` when the cache has it, and makes every write of a renewal, of an
 * `invalid_grant` mark or of a sign-out through `compareAndSet` when the cache has it.
 *
 * @since 2.0.0
 * @category models
 */
export interface TokenCache {
  readonly get: Effect.Effect<Option.Option<TokenInfo>, TokenCacheError>
  readonly set: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Forgets the entry (sign-out). Memory, file, directory and Redis caches have it. */
  readonly clear?: Effect.Effect<void, TokenCacheError>
  /** Runs `self` while holding a lock shared by every process using this cache (cross-process single flight). */
  readonly withLock?: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | TokenCacheError, R>
  /**
   * Writes `next` only if the entry still holds `expected` (the same access token and refresh token; a
   * `refresh_rejected` mark added since does not count as a change) or, for `Option.none()`, holds nothing; `true`
   * when written. Atomic against every other writer of the entry, in every process.
   */
  readonly compareAndSet?: (
    expected: Option.Option<TokenInfo>,
    next: TokenInfo
  ) => Effect.Effect<boolean, TokenCacheError>
}

/**
 * The comparison of `compareAndSet`: `Option.none()` matches only an empty entry; a token matches an entry with the
 * same access token and the same refresh token (or both none), whatever else changed.
 *
 * @since 2.0.0
 * @category utils
 */
export const sameEntry: (expected: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>) => boolean =
  Codec.sameEntry

/**
 * Reads stored text leniently (the format both lines store): anything but an object with a string `access_token`
 * and a finite `expires_at` is none; an ill-typed optional field reads as absent.
 *
 * @since 2.0.0
 * @category codecs
 */
export const decodeJson: (text: string) => Option.Option<TokenInfo> = Codec.decodeJson

/**
 * The text a shared cache stores: `{ access_token, expires_at, refresh_token?, scope? }` and, when the token has
 * them, `client_id`, `auth_url`, `issued_at`, `refresh_rejected`.
 *
 * @since 2.0.0
 * @category codecs
 */
export const encodeJson: (token: TokenInfo) => string = Codec.encodeJson

/**
 * The default cache: a `Ref` in this process (its `compareAndSet` is trivially atomic).
 *
 * @since 2.0.0
 * @category constructors
 */
export const memory = (initial?: TokenInfo): Effect.Effect<TokenCache> =>
  Effect.map(Ref.make(Option.fromNullishOr(initial)), (ref) => ({
    get: Ref.get(ref),
    set: (token) => Ref.set(ref, Option.some(token)),
    clear: Ref.set(ref, Option.none()),
    compareAndSet: (expected, next) =>
      Ref.modify(ref, (current) => (sameEntry(expected, current) ? [true, Option.some(next)] : [false, current]))
  }))

/**
 * The options of {@link file} and `TokenStore.directory`: how the lock file behaves.
 *
 * @since 2.0.0
 * @category options
 */
export interface FileOptions {
  /**
   * How long a lock file outlives a holder that stopped keeping it alive, e.g. a frozen process (default 10 s). It is
   * written in the lock: a waiter honours its holder's TTL (up to 5 minutes), so processes with different values
   * still make one renewal per expiry.
   */
  readonly lockTtl?: Duration.Input | undefined
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly lockWait?: Duration.Input | undefined
}

/**
 * The lock options, checked: positive, finite, at most 2^31-1 ms, else a ConfigurationError naming the option.
 *
 * @since 2.0.0
 * @category utils
 */
export const fileLockOptions = (options: FileOptions | undefined) =>
  Effect.gen(function* () {
    const check = (value: Duration.Input | undefined, fallback: number, name: string) =>
      Effect.flatMap(nonNegativeDuration(value, Duration.millis(fallback), name), (duration) => {
        const millis = Duration.toMillis(duration)
        return millis >= 1 && millis <= 2 ** 31 - 1
          ? Effect.succeed(millis)
          : Effect.fail(new ConfigurationError({ message: `${name} must be a positive, finite duration` }))
      })
    return {
      ttlMillis: yield* check(options?.lockTtl, FileLock.DEFAULT_LOCK_OPTIONS.ttlMillis, "lockTtl"),
      waitMillis: yield* check(options?.lockWait, FileLock.DEFAULT_LOCK_OPTIONS.waitMillis, "lockWait")
    } satisfies FileLockOptions
  })

/**
 * A cache in a JSON file, for command-line tools and for the processes of one machine; the same file protocol as the
 * Effect 3 line's (one shared implementation), so processes of both lines can share one file. Every write (`set`,
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
 * says so, and `clear` still removes the entry. Temp files left by a crash are swept under the lock and by `clear`.
 *
 * @since 2.0.0
 * @category constructors
 */
export const file = (path: string, options?: FileOptions): Effect.Effect<TokenCache, ConfigurationError> =>
  Effect.gen(function* () {
    yield* checkedPath("TokenCache.file", path, "file")
    const lock = yield* fileLockOptions(options)
    const checked: DirectoryCheck = { ok: false }
    // the directory and the file are judged now, as at every use (a ConfigurationError that says why)
    yield* Effect.catchTag(run(FileEntry.make(path, lock, checked).get), "TokenCacheError", () => Effect.void)
    return makeFile(path, lock, checked)
  })

/**
 * What to do with a token directory that other users may write or own: "ok"; "tighten" (it is ours: chmod 700 it);
 * "refuse" (another user's, or a shared directory such as /tmp). The check the file caches make (where "tighten" is
 * refused too, with the fix in the message).
 *
 * @since 2.0.0
 * @category files
 */
export const directoryVerdict: (
  stat: { readonly mode: number; readonly uid: number },
  uid: number | undefined
) => "ok" | "tighten" | "refuse" = Safety.directoryVerdict

/**
 * Why {@link directoryVerdict} did not say "ok", in words (with the directory's mode or owner).
 *
 * @since 2.0.0
 * @category files
 */
export const directoryProblem: (
  stat: { readonly mode: number; readonly uid: number },
  uid: number | undefined
) => string = Safety.directoryProblem

/**
 * A file cache made synchronously (`TokenStore.directory` makes one per user on demand): the shared file protocol
 * run on `node:fs`. `checked` is the memo of the directory check, shared by the caches of one directory.
 *
 * @since 2.0.0
 * @category constructors
 */
export const makeFile = (
  path: string,
  lockOptions: FileLockOptions,
  checked: DirectoryCheck = { ok: false }
): TokenCache => makeFileCache(path, lockOptions, checked)

/**
 * The options of {@link browser}.
 *
 * @since 2.0.0
 * @category browser
 */
export interface BrowserOptions {
  /** The entry's name, so one origin can keep several sign-ins apart (default `"default"`). */
  readonly key?: string | undefined
}

/**
 * A cache shared by every tab of one origin, for a page (the Effect 4 line runs in browsers): the entry lives in
 * IndexedDB, `withLock` holds a Web Lock (`navigator.locks`) so the tabs make one token request per expiry between
 * them, and `compareAndSet` is one IndexedDB read-write transaction (atomic against every other tab). A change
 * made by one tab is read by the others at their next renewal, with no reload; a tab that closes or crashes while it
 * holds the lock releases it (the browser does). Where Web Locks or IndexedDB are missing (an old browser, a page
 * not served over https or from a loopback address, Node) it fails with a ConfigurationError, never falling back
 * to a per-tab cache. Any script of the origin can read the entry: see docs/browser.md.
 *
 * @example
 * ```ts
 * import { TokenCache } from "@service-sdk/effect"
 *
 * const cache = TokenCache.browser({ key: "my-app" }) // Effect<TokenCache, ConfigurationError>
 * ```
 *
 * @since 2.0.0
 * @category browser
 */
export const browser = (options?: BrowserOptions): Effect.Effect<TokenCache, ConfigurationError> =>
  BrowserCache.make(options)
