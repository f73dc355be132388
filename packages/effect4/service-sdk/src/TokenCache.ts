/**
 * Where providers keep their token: in memory (the default), in a file (command-line use, the processes of one
 * machine), or in a shared store such as Redis (`@service-sdk/redis`).
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import * as Fiber from "effect/Fiber"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { nonNegativeDuration } from "./internal/config.js"
import { checkedPath, run } from "./internal/fileProgram.js"
import * as FileEntry from "@service-sdk/shared/fileEntry"
import * as FileLock from "@service-sdk/shared/fileLock"
import type { Program } from "@service-sdk/shared/fileOps"
import * as Safety from "@service-sdk/shared/fileSafety"
import { sameTokenJson } from "@service-sdk/shared/tokenJson"
import { ConfigurationError, type TokenCacheError } from "./ServiceError.js"
import { decodeText, encodeText, type TokenInfo } from "./TokenInfo.js"

/**
 * The cache protocol every provider reads and writes: `get`, `set`, and optionally `clear`, and, for a cache that
 * several processes share, `withLock` and `compareAndSet`. The guarantees are declared, not special cases: a
 * provider runs its renewal under `withLock` when the cache has it, and makes every write of a renewal, of an
 * `invalid_grant` mark or of a sign-out through `compareAndSet` when the cache has it.
 *
 * @since 2.0.0
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

const refreshOf = (token: TokenInfo) =>
  token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken)

/**
 * The comparison of `compareAndSet`: `Option.none()` matches only an empty entry; a token matches an entry with the
 * same access token and the same refresh token (or both none), whatever else changed.
 *
 * @since 2.0.0
 */
export const sameEntry = (expected: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>): boolean =>
  sameTokenJson(
    Option.match(expected, {
      onNone: () => undefined,
      onSome: (t) => ({ access_token: Redacted.value(t.accessToken), refresh_token: refreshOf(t) })
    }),
    Option.match(current, {
      onNone: () => undefined,
      onSome: (t) => ({ access_token: Redacted.value(t.accessToken), refresh_token: refreshOf(t) })
    })
  )

/**
 * Reads stored text leniently (the format both lines store): anything but an object with a string `access_token`
 * and a finite `expires_at` is none; an ill-typed optional field reads as absent.
 *
 * @since 2.0.0
 */
export const decodeJson = (text: string): Option.Option<TokenInfo> => Option.fromUndefinedOr(decodeText(text))

/**
 * The text a shared cache stores: `{ access_token, expires_at, refresh_token?, scope? }` and, when the token has
 * them, `client_id`, `auth_url`, `issued_at`, `refresh_rejected`.
 *
 * @since 2.0.0
 */
export const encodeJson = (token: TokenInfo): string => encodeText(token)

/**
 * The default cache: a `Ref` in this process (its `compareAndSet` is trivially atomic).
 *
 * @since 2.0.0
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
 */
export interface FileOptions {
  /** How long a lock file outlives a holder that stopped keeping it alive, e.g. a frozen process (default 10 s). */
  readonly lockTtl?: Duration.Input | undefined
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly lockWait?: Duration.Input | undefined
}

/** The lock options, checked: positive, finite, at most 2^31-1 ms, else a ConfigurationError naming the option. */
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
    } satisfies FileLock.FileLockOptions
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
 * is provably gone or stopped keeping it alive). Temp files left by a crash are swept under the lock and by `clear`.
 *
 * @since 2.0.0
 */
export const file = (path: string, options?: FileOptions): Effect.Effect<TokenCache, ConfigurationError> =>
  Effect.gen(function* () {
    yield* checkedPath("TokenCache.file", path, "file")
    const lock = yield* fileLockOptions(options)
    const checked: FileEntry.DirectoryCheck = { ok: false }
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
 */
export const directoryVerdict: (
  stat: { readonly mode: number; readonly uid: number },
  uid: number | undefined
) => "ok" | "tighten" | "refuse" = Safety.directoryVerdict

/**
 * Why {@link directoryVerdict} did not say "ok", in words (with the directory's mode or owner).
 *
 * @since 2.0.0
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
 */
export const makeFile = (
  path: string,
  lockOptions: FileLock.FileLockOptions,
  checked: FileEntry.DirectoryCheck = { ok: false }
): TokenCache => {
  const entry = FileEntry.make(path, lockOptions, checked)
  // A ConfigurationError travels in the operations' TokenCacheError channel (the contract types them so); it is a
  // ServiceError all the same (`Effect.catchTag` catches it).
  const exec = <A>(program: () => Program<A>) => run(program) as Effect.Effect<A, TokenCacheError>
  const decode = (text: string | undefined) => (text === undefined ? Option.none<TokenInfo>() : decodeJson(text))

  const get = Effect.map(exec(entry.get), decode)
  const set = (token: TokenInfo) => Effect.asVoid(exec(() => entry.write(encodeJson(token))))
  const clear = exec(entry.clear)

  // The lock is re-entrant for the fiber that holds it (a compare-and-set inside the provider's `withLock`): the
  // fiber carries the id of its hold, and this cache knows which hold is current.
  const Hold = Context.Reference<symbol | undefined>(`service-sdk/TokenCache.file/${path}/${Math.random()}`, {
    defaultValue: () => undefined
  })
  let current: symbol | undefined
  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.flatMap(Hold, (mine) =>
      mine !== undefined && mine === current
        ? self
        : Effect.acquireUseRelease(
            exec(entry.lock.acquire),
            (held) =>
              Effect.flatMap(Effect.forkChild(exec(() => entry.lock.heartbeat(held))), (beat) =>
                Effect.ensuring(
                  Effect.andThen(
                    exec(entry.lock.sweep),
                    Effect.suspend(() => {
                      const id = Symbol(path)
                      current = id
                      return Effect.ensuring(
                        Effect.provideService(self, Hold, id),
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

  // Atomic on its own (the version check of the shared protocol); taken under the lock as well.
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    withLock(exec(() => entry.write(encodeJson(next), (text) => sameEntry(expected, decode(text)))))

  return { get, set, clear, withLock, compareAndSet }
}
