/**
 * Where providers keep their token: in memory (the default), in a file (command-line use, the processes of one
 * machine), or in a shared store such as Redis (`@service-sdk/redis`).
 *
 * @since 2.0.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { nonNegativeDuration } from "./internal/config.js"
import * as FileEntry from "./internal/shared/fileEntry.js"
import * as FileLock from "./internal/shared/fileLock.js"
import { describeCause, safeCause } from "./internal/shared/redact.js"
import { sameTokenJson } from "./internal/shared/tokenJson.js"
import { ConfigurationError, TokenCacheError } from "./ServiceError.js"
import { decodeText, encodeText, fromJson, type TokenInfo, toJson } from "./TokenInfo.js"

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

const cacheError = (message: string) => (cause: unknown) =>
  new TokenCacheError({ message: `${message}: ${describeCause(cause)}`, cause: safeCause(cause) })

/**
 * A cache in a JSON file, for command-line tools and for the processes of one machine; the same file, lock file and
 * format as the Effect 3 line's, so processes of both lines can share one. Writes are atomic (a temp file renamed
 * over the target) with mode 0600 in a parent directory it creates (0700); a missing, unreadable or invalid file
 * reads as none. `withLock` holds the lock file `<path>.lock` (created exclusively with an owner and an expiry, kept
 * alive while held, taken over when its holder is gone), and `compareAndSet` reads, compares and writes under it.
 *
 * @since 2.0.0
 */
export const file = (path: string, options?: FileOptions): Effect.Effect<TokenCache, ConfigurationError> =>
  Effect.map(fileLockOptions(options), (lock) => makeFile(path, lock))

/**
 * A file cache made synchronously (`TokenStore.directory` makes one per user on demand).
 *
 * @since 2.0.0
 */
export const makeFile = (path: string, lockOptions: FileLock.FileLockOptions): TokenCache => {
  const get = Effect.promise(() => FileEntry.readEntry(path)).pipe(
    Effect.map((json) => Option.map(Option.fromUndefinedOr(json), fromJson))
  )
  const set = (token: TokenInfo) =>
    Effect.tryPromise({
      try: () => FileEntry.writeEntry(path, toJson(token)),
      catch: cacheError(`cannot write the token cache file ${path}`)
    })
  const clear = Effect.tryPromise({
    try: () => FileEntry.removeEntry(path),
    catch: cacheError(`cannot remove the token cache file ${path}`)
  })
  // A file that is there but cannot be read is not an empty entry: refuse rather than overwrite it blindly.
  const readForCompare = Effect.tryPromise({
    try: () => FileEntry.readEntryStrict(path),
    catch: cacheError(`cannot read the token cache file ${path}`)
  }).pipe(Effect.map((json) => Option.map(Option.fromUndefinedOr(json), fromJson)))

  // what the plain lock reports from its callbacks is logged afterwards, in the caller's fiber (its logger)
  const acquire = Effect.gen(function* () {
    const takenOver: Array<string> = []
    const holder = yield* Effect.tryPromise({
      try: (signal) =>
        FileLock.acquire(path, lockOptions, { signal, onTakeOver: (lockPath) => takenOver.push(lockPath) }),
      catch: (cause) =>
        cause instanceof FileLock.FileLockError && cause.code === "timeout"
          ? new TokenCacheError({ message: cause.message })
          : cacheError(`cannot take the token lock file ${FileLock.lockPathOf(path)}`)(cause)
    })
    for (const lockPath of takenOver) {
      yield* Effect.logWarning(`took over the stale token lock file ${lockPath} (its holder is gone)`)
    }
    return holder
  })
  const release = (holder: FileLock.Holder, lost: boolean) =>
    Effect.gen(function* () {
      if (lost) {
        yield* Effect.logWarning(
          `lost the token lock file ${FileLock.lockPathOf(path)} while holding it: another process may have renewed too`
        )
      }
      const failure = yield* Effect.promise(() => FileLock.release(path, holder))
      if (failure !== undefined) {
        yield* Effect.logWarning(`cannot remove the token lock file ${FileLock.lockPathOf(path)}: ${failure}`)
      }
    })

  // The lock is re-entrant for the fiber that holds it (a compare-and-set inside the provider's `withLock`): the
  // fiber carries the id of its hold, and this cache knows which hold is current.
  const Hold = Context.Reference<symbol | undefined>(`service-sdk/TokenCache.file/${path}/${Math.random()}`, {
    defaultValue: () => undefined
  })
  let current: symbol | undefined
  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.flatMap(Hold, (mine) => {
      if (mine !== undefined && mine === current) return self
      let lost = false
      return Effect.acquireUseRelease(
        acquire,
        (holder) =>
          Effect.suspend(() => {
            const id = Symbol(path)
            current = id
            const stop = FileLock.heartbeat(path, holder, () => {
              lost = true
            })
            return Effect.ensuring(
              Effect.provideService(self, Hold, id),
              Effect.sync(() => {
                stop()
                if (current === id) current = undefined
              })
            )
          }),
        (holder) => release(holder, lost)
      )
    })

  // Read, compare, write (temp + rename), all under the lock file.
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    withLock(
      Effect.flatMap(readForCompare, (found) =>
        sameEntry(expected, found) ? Effect.as(set(next), true) : Effect.succeed(false)
      )
    )

  return { get, set, clear, withLock, compareAndSet }
}
