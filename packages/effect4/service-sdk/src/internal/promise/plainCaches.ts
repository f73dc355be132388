/**
 * `fileTokenCache` and `directoryTokenStore` for plain code: Promise views of `TokenCache.file` and
 * `TokenStore.directory` (the same files, lock and compare-and-set). The facade recognises them and uses the Effect
 * cache behind them, so a provider gets every guarantee the Effect cache declares.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { ConfigurationError } from "../../ServiceError.js"
import * as TokenCache from "../../TokenCache.js"
import { TokenInfo, type TokenInfoJson } from "../../TokenInfo.js"
import * as TokenStore from "../../TokenStore.js"
import { checkedPath } from "../fileProgram.js"
import { getOrThrow, squash } from "./bridge.js"
import { resolveLogging, withLogging } from "./logging.js"

/**
 * A token cache for plain code backed by a file (see {@link fileTokenCache}).
 *
 * @since 2.0.0
 */
export interface FileTokenCache {
  /** The cached token, or `undefined`. */
  readonly get: () => Promise<TokenInfo | undefined>
  /** Writes the token (atomically, mode 0600). */
  readonly set: (token: TokenInfo) => Promise<void>
  /** Removes the entry. */
  readonly clear: () => Promise<void>
}

/**
 * A token store for plain code: one file per user in a directory (see {@link directoryTokenStore}).
 *
 * @since 2.0.0
 */
export type DirectoryTokenStore = (userId: string) => FileTokenCache

const effectCaches = new WeakMap<object, TokenCache.TokenCache>()
const effectStores = new WeakMap<object, Effect.Effect<TokenStore.TokenStore>>()

/** The Effect cache behind a {@link fileTokenCache}, if `cache` is one. */
export const effectCacheOf = (cache: object): TokenCache.TokenCache | undefined => effectCaches.get(cache)

/** The Effect store behind a {@link directoryTokenStore} (ready once its directory exists), if `store` is one. */
export const effectStoreOf = (store: object): Effect.Effect<TokenStore.TokenStore> | undefined =>
  effectStores.get(store)

let defaultLogging: ReturnType<typeof resolveLogging> | undefined

/** Runs a cache operation called from plain code, logging as a facade object does by default (stderr, warnings). */
const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
  defaultLogging ??= resolveLogging({})
  return Effect.runPromiseExit(withLogging(defaultLogging)(effect)).then((exit) => getOrThrow(exit))
}

const runSyncOrThrow = <A, E>(effect: Effect.Effect<A, E>): A => getOrThrow(Effect.runSyncExit(effect))

const plainView = (cache: Effect.Effect<TokenCache.TokenCache>): FileTokenCache => ({
  get: () => run(Effect.flatMap(cache, (c) => Effect.map(c.get, Option.getOrUndefined))),
  set: (token) => run(Effect.flatMap(cache, (c) => c.set(token))),
  clear: () => run(Effect.flatMap(cache, (c) => c.clear ?? Effect.void))
})

const checkPath = (name: string, path: unknown, kind: "file" | "directory"): string => {
  if (typeof path !== "string") {
    throw new ConfigurationError({ message: `${name} takes a path (a string), got ${typeof path}` })
  }
  runSyncOrThrow(checkedPath(name, path, kind))
  return path
}

/**
 * A token cache in a file, for plain code: `TokenCache.file(path)` behind Promise methods (atomic writes, mode 0600;
 * an unreadable or invalid file reads as none; shared safely by the processes of one machine: every write a
 * compare-and-set that is atomic on its own; a directory or file another user can write is refused with a
 * ConfigurationError; an empty path or the root throws one at once). Pass it as `tokenCache` to
 * `AsyncClientCredentials`, `AsyncAuthorizationCode` or `AsyncServiceClient`.
 *
 * @example
 * ```ts
 * import { AsyncAuthorizationCode, fileTokenCache } from "@service-sdk/effect/promise"
 *
 * const tokenCache = fileTokenCache(`${process.env.HOME}/.config/my-app/tokens.json`)
 * await using auth = new AsyncAuthorizationCode({ redirectUri: "http://127.0.0.1:8080/callback", tokenCache })
 * ```
 *
 * @since 2.0.0
 */
export const fileTokenCache = (path: string): FileTokenCache => {
  const checked = checkPath("fileTokenCache", path, "file")
  // the directory and the file are judged at the first use (a ConfigurationError that says why)
  const cache = TokenCache.makeFile(checked, runSyncOrThrow(TokenCache.fileLockOptions(undefined)))
  const plain = plainView(Effect.succeed(cache))
  effectCaches.set(plain, cache)
  return plain
}

/**
 * A token store in a directory, for plain code: `TokenStore.directory(path)` behind Promise methods (one 0600 file
 * per user in a 0700 directory, named so that no id escapes it). Pass it as `store` to `AsyncUserTokens`.
 *
 * @example
 * ```ts
 * import { AsyncUserTokens, directoryTokenStore } from "@service-sdk/effect/promise"
 *
 * const users = new AsyncUserTokens({
 *   redirectUri: "http://127.0.0.1:3000/callback",
 *   store: directoryTokenStore("/var/lib/my-app/tokens")
 * })
 * ```
 *
 * @since 2.0.0
 */
export const directoryTokenStore = (path: string): DirectoryTokenStore => {
  const made = TokenStore.directory(checkPath("directoryTokenStore", path, "directory"))
  // the directory is created asynchronously: every use waits for the one creation; a failure is a defect of
  // every use (the SDK's own error, rethrown as it is)
  let ready: Promise<Exit.Exit<TokenStore.TokenStore, ConfigurationError>> | undefined
  const store = Effect.flatMap(
    Effect.promise(() => {
      ready ??= Effect.runPromiseExit(made)
      return ready
    }),
    (exit) => (Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.die(squash(exit.cause)))
  )
  const plain: DirectoryTokenStore = (userId) => plainView(Effect.map(store, (s) => s(userId)))
  effectStores.set(plain, store)
  return plain
}

/**
 * The JSON form of a token (`{ access_token, expires_at, ... }`, the secrets in clear), to keep it in a store of
 * your own; {@link tokenInfoFromJson} reads it back.
 *
 * @since 2.0.0
 */
export const tokenInfoToJson = (token: TokenInfo): TokenInfoJson => JSON.parse(TokenCache.encodeJson(token))

/**
 * A token from its JSON form (or the text of it); `undefined` when it is not one.
 *
 * @since 2.0.0
 */
export const tokenInfoFromJson = (json: unknown): TokenInfo | undefined => {
  if (json instanceof TokenInfo) return json
  if (json === undefined || json === null) return undefined
  return Option.getOrUndefined(TokenCache.decodeJson(typeof json === "string" ? json : JSON.stringify(json)))
}
