/**
 * Where providers keep their token: in memory (the default), in a file (command-line use), or in a shared store such
 * as Redis (see `@service-sdk/redis`) whose `withLock` makes renewal single-flight across processes.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { describeCause, safeCause } from "./internal/redact.js"
import { TokenCacheError } from "./ServiceError.js"
import { TokenInfo } from "./TokenInfo.js"

/**
 * The cache protocol every provider reads and writes: `get`, `set`, and optionally `withLock` (a lock shared by every process using the cache) and `clear`.
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
}

/**
 * The default cache: a `Ref` in this process.
 *
 * @since 0.1.0
 */
export const memory = (initial?: TokenInfo): Effect.Effect<TokenCache> =>
  Effect.map(Ref.make(Option.fromNullable(initial)), (ref) => ({
    get: Ref.get(ref),
    set: (token) => Ref.set(ref, Option.some(token)),
    clear: Ref.set(ref, Option.none())
  }))

const decodeEntry = Schema.decodeUnknownOption(TokenInfo)

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
  const { refresh_token, scope, client_id, auth_url, issued_at, refresh_rejected, ...required } = json as Record<
    string,
    unknown
  >
  return decodeEntry({
    ...required,
    ...(typeof refresh_token === "string" && refresh_token !== "" ? { refresh_token } : {}),
    ...(typeof scope === "string" ? { scope } : {}),
    ...(typeof client_id === "string" ? { client_id } : {}),
    ...(typeof auth_url === "string" ? { auth_url } : {}),
    ...(typeof issued_at === "number" && Number.isFinite(issued_at) ? { issued_at } : {}),
    ...(refresh_rejected === true ? { refresh_rejected } : {})
  })
}

const encodeEntry = Schema.encodeSync(TokenInfo)

/**
 * The JSON text a shared cache stores: `{ access_token, expires_at, refresh_token?, scope? }` and, when the token
 * has them, `client_id`, `auth_url`, `issued_at`, `refresh_rejected`.
 *
 * @since 0.1.0
 */
export const encodeJson = (token: TokenInfo): string => JSON.stringify(encodeEntry(token))

/**
 * A cache in a JSON file, for command-line tools. Writes are atomic (a temp file renamed over the target) with mode
 * 0600 in a parent directory it creates (0700); a missing, unreadable or invalid file reads as none.
 *
 * @since 0.1.0
 */
export const file = (path: string): Effect.Effect<TokenCache, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
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
    return { get, set, clear } satisfies TokenCache
  })
