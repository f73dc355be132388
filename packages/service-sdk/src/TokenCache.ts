/**
 * Where providers keep their token: in memory (the default), in a file (command-line use), or in a shared store such
 * as Redis (see `@service-sdk/redis`) whose `withLock` makes renewal single-flight across processes.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Duration from "effect/Duration"
import * as FiberRef from "effect/FiberRef"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as FileLock from "./internal/fileLock.js"
import { describeCause, safeCause } from "./internal/redact.js"
import { ConfigurationError, TokenCacheError } from "./ServiceError.js"
import { TokenInfo } from "./TokenInfo.js"

/**
 * The cache protocol every provider reads and writes: `get`, `set`, and optionally `clear`, and, for a cache that
 * several processes share, `withLock` and `compareAndSet`. The guarantees are declared, not special cases: a
 * provider runs its renewal under `withLock` when the cache has it, and makes every write of a renewal, of an
 * `invalid_grant` mark or of a sign-out through `compareAndSet` when the cache has it. A cache of your own that
 * declares both members gets exactly the guarantees of the SDK's shared caches.
 *
 * @since 0.1.0
 */
export interface TokenCache {
  readonly get: Effect.Effect<Option.Option<TokenInfo>, TokenCacheError>
  readonly set: (token: TokenInfo) => Effect.Effect<void, TokenCacheError>
  /** Runs `self` while holding a lock shared by every process using this cache (cross-process single flight). */
  readonly withLock?: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | TokenCacheError, R>
  /**
   * Forgets the entry (sign-out). Optional; memory, file and Redis caches have it.
   *
   * @since 0.2.0
   */
  readonly clear?: Effect.Effect<void, TokenCacheError>
  /**
   * Writes `next` only if the entry still holds `expected` (the same access token and refresh token, see
   * {@link sameEntry}; a `refresh_rejected` mark added since does not count as a change) or, for `Option.none()`,
   * holds nothing; `true` when written. Atomic against every other writer of the entry, in every process.
   *
   * @since 0.3.0
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
 * @since 0.3.0
 */
export const sameEntry = (expected: Option.Option<TokenInfo>, current: Option.Option<TokenInfo>): boolean => {
  if (Option.isNone(expected) || Option.isNone(current)) return Option.isNone(expected) && Option.isNone(current)
  const a = expected.value
  const b = current.value
  const refresh = (token: TokenInfo) =>
    token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken)
  return Redacted.value(a.accessToken) === Redacted.value(b.accessToken) && refresh(a) === refresh(b)
}

/**
 * The default cache: a `Ref` in this process (its `compareAndSet` is trivially atomic).
 *
 * @since 0.1.0
 */
export const memory = (initial?: TokenInfo): Effect.Effect<TokenCache> =>
  Effect.map(Ref.make(Option.fromNullable(initial)), (ref) => ({
    get: Ref.get(ref),
    set: (token) => Ref.set(ref, Option.some(token)),
    clear: Ref.set(ref, Option.none()),
    compareAndSet: (expected, next) =>
      Ref.modify(ref, (current) => (sameEntry(expected, current) ? [true, Option.some(next)] : [false, current]))
  }))

// parsers compiled on first use: nothing of the schema is evaluated at import (issue 31)
let decodeEntry: ((input: unknown) => Option.Option<TokenInfo>) | undefined

/**
 * Reads a cache entry leniently: anything but an object with a string `access_token` and a numeric `expires_at`
 * is none; an ill-typed optional field reads as absent.
 *
 * @since 0.1.0
 */
export const decodeJson = (text: string): Option.Option<TokenInfo> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Option.none()
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return Option.none()
  const {
    refresh_token,
    scope,
    client_id,
    auth_url,
    issued_at,
    refresh_rejected,
    signed_in_at,
    sign_in_ends_at,
    ...required
  } = json as Record<string, unknown>
  const finite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value)
  decodeEntry ??= Schema.decodeUnknownOption(TokenInfo)
  return decodeEntry({
    ...required,
    ...(typeof refresh_token === "string" && refresh_token !== "" ? { refresh_token } : {}),
    ...(typeof scope === "string" ? { scope } : {}),
    ...(typeof client_id === "string" ? { client_id } : {}),
    ...(typeof auth_url === "string" ? { auth_url } : {}),
    ...(finite(issued_at) ? { issued_at } : {}),
    ...(refresh_rejected === true ? { refresh_rejected } : {}),
    ...(finite(signed_in_at) ? { signed_in_at } : {}),
    ...(finite(sign_in_ends_at) ? { sign_in_ends_at } : {})
  })
}

let encodeEntry: ((token: TokenInfo) => unknown) | undefined

/**
 * The JSON text a shared cache stores: `{ access_token, expires_at, refresh_token?, scope? }` and, when the token
 * has them, `client_id`, `auth_url`, `issued_at`, `refresh_rejected`, `signed_in_at`, `sign_in_ends_at`.
 *
 * @since 0.1.0
 */
export const encodeJson = (token: TokenInfo): string => {
  encodeEntry ??= Schema.encodeSync(TokenInfo)
  return JSON.stringify(encodeEntry(token))
}

/**
 * The options of {@link file} and `TokenStore.directory`: how the lock file behaves.
 *
 * @since 0.3.0
 */
export interface FileOptions {
  /** How long a lock file outlives a holder that stopped keeping it alive, e.g. a frozen process (default 10 s). */
  readonly lockTtl?: Duration.DurationInput | undefined
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly lockWait?: Duration.DurationInput | undefined
}

/**
 * The lock options of {@link FileOptions}, checked: positive and finite, else a ConfigurationError naming the option.
 *
 * @since 0.3.0
 */
export const fileLockOptions = (options: FileOptions | undefined) =>
  Effect.gen(function* () {
    const check = (value: Duration.DurationInput | undefined, fallback: Duration.Duration, name: string) =>
      Effect.suspend(() => {
        if (value === undefined) return Effect.succeed(fallback)
        const decoded = Option.filter(
          Duration.decodeUnknown(value),
          (d) => Duration.isFinite(d) && Duration.toMillis(d) >= 1 && Duration.toMillis(d) <= 2 ** 31 - 1
        )
        return Option.match(decoded, {
          onNone: () => Effect.fail(new ConfigurationError({ message: `${name} must be a positive, finite duration` })),
          onSome: Effect.succeed
        })
      })
    return {
      ttl: yield* check(options?.lockTtl, FileLock.defaultOptions.ttl, "lockTtl"),
      wait: yield* check(options?.lockWait, FileLock.defaultOptions.wait, "lockWait")
    } satisfies FileLock.FileLockOptions
  })

/**
 * A cache in a JSON file, for command-line tools and for the processes of one machine. Writes are atomic (a temp
 * file renamed over the target) with mode 0600 in a parent directory it creates (0700); a missing, unreadable or
 * invalid file reads as none. `withLock` holds the lock file `<path>.lock` (created exclusively with an owner and
 * an expiry, kept alive while held, taken over when its holder is gone), and `compareAndSet` reads, compares and
 * writes under it: several CLI invocations, cron jobs or workers sharing the file make one renewal per expiry.
 *
 * @since 0.1.0
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
  return Effect.flatMap(fileLockOptions(options), (lock) =>
    Effect.map(FileSystem.FileSystem, (fs) => makeFile(fs, path, lock))
  )
}

/**
 * A file cache over `fs`, made synchronously (`TokenStore.directory` makes one per user on demand).
 *
 * @since 0.3.0
 */
export const makeFile = (
  fs: FileSystem.FileSystem,
  path: string,
  lockOptions: FileLock.FileLockOptions
): TokenCache => {
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : "."
  const get = fs.readFileString(path).pipe(
    Effect.map(decodeJson),
    Effect.orElseSucceed(() => Option.none<TokenInfo>())
  )
  const set = (token: TokenInfo) =>
    Effect.gen(function* () {
      yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
      const tmp = `${path}.${(yield* Effect.random.pipe(Effect.flatMap((r) => r.nextIntBetween(0, 2 ** 31)))).toString(36)}.tmp`
      // Created exclusively (never through a file or link someone placed there), and removed on any failed
      // write after it exists (a full disk must not leave empty temp files behind).
      const removeTmp = fs.remove(tmp).pipe(Effect.ignore)
      yield* fs
        .writeFileString(tmp, encodeJson(token), { flag: "wx", mode: 0o600 })
        .pipe(
          Effect.tapError((cause) =>
            cause._tag === "SystemError" && cause.reason === "AlreadyExists" ? Effect.void : removeTmp
          )
        )
      yield* Effect.zipRight(fs.chmod(tmp, 0o600), fs.rename(tmp, path)).pipe(Effect.tapError(() => removeTmp))
    }).pipe(
      Effect.mapError(
        (cause) =>
          new TokenCacheError({
            message: `cannot write the token cache file ${path}: ${describeCause(cause)}`,
            cause: safeCause(cause)
          })
      )
    )
  // a missing file is already clear
  const clear = fs.remove(path).pipe(
    Effect.catchIf(
      (cause) => cause._tag === "SystemError" && cause.reason === "NotFound",
      () => Effect.void
    ),
    Effect.mapError(
      (cause) =>
        new TokenCacheError({
          message: `cannot remove the token cache file ${path}: ${describeCause(cause)}`,
          cause: safeCause(cause)
        })
    )
  )

  // The lock is re-entrant for the fiber that holds it (a compare-and-set inside the provider's `withLock`): the
  // fiber carries the id of its hold, and this cache knows which hold is current (a fiber forked inside a hold
  // that has ended takes the lock again).
  const lockFile = FileLock.make(fs, path, dir, lockOptions)
  const hold = FiberRef.unsafeMake<symbol | undefined>(undefined)
  let current: symbol | undefined
  const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.flatMap(FiberRef.get(hold), (mine) =>
      mine !== undefined && mine === current
        ? self
        : lockFile(
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
          )
    )

  // Read, compare, write (temp + rename), all under the lock file.
  const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
    withLock(
      Effect.flatMap(readForCompare, (found) =>
        sameEntry(expected, found) ? Effect.as(set(next), true) : Effect.succeed(false)
      )
    )
  // A file that is there but cannot be read is not an empty entry: refuse rather than overwrite it blindly.
  const readForCompare = fs.readFileString(path).pipe(
    Effect.map(decodeJson),
    Effect.catchIf(
      (cause) => cause._tag === "SystemError" && cause.reason === "NotFound",
      () => Effect.succeed(Option.none<TokenInfo>())
    ),
    Effect.mapError(
      (cause) =>
        new TokenCacheError({
          message: `cannot read the token cache file ${path}: ${describeCause(cause)}`,
          cause: safeCause(cause)
        })
    )
  )

  return { get, set, clear, withLock, compareAndSet } satisfies TokenCache
}
