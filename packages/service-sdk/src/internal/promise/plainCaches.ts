/**
 * `fileTokenCache` and `directoryTokenStore` for plain code: Promise views of `TokenCache.file` and
 * `TokenStore.directory` (the same files, lock and compare-and-set). The facade recognises them and uses the Effect
 * cache behind them, so a provider gets every guarantee the Effect cache declares.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { runPromise, runSyncOrThrow } from "../../bridge.js"
import { checkPath } from "../fileProgram.js"
import * as TokenCache from "../../TokenCache.js"
import { TokenInfo, type TokenInfoJson } from "../../TokenInfo.js"
import * as TokenStore from "../../TokenStore.js"
import { loggerLayer } from "./logging.js"

/**
 * A token cache for plain code backed by a file (see {@link fileTokenCache}).
 *
 * @since 1.0.0
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
 * @since 1.0.0
 */
export type DirectoryTokenStore = (userId: string) => FileTokenCache

const effectCaches = new WeakMap<object, TokenCache.TokenCache>()
const effectStores = new WeakMap<object, Effect.Effect<TokenStore.TokenStore>>()

/** The Effect cache behind a {@link fileTokenCache}, if `cache` is one. */
export const effectCacheOf = (cache: object): TokenCache.TokenCache | undefined => effectCaches.get(cache)

/** The Effect store behind a {@link directoryTokenStore} (ready once its directory exists), if `store` is one. */
export const effectStoreOf = (store: object): Effect.Effect<TokenStore.TokenStore> | undefined =>
  effectStores.get(store)

/** Runs a cache operation called from plain code, logging as a facade object does by default (stderr, warnings). */
const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => runPromise(Effect.provide(effect, loggerLayer({})))

const plainView = (cache: Effect.Effect<TokenCache.TokenCache>): FileTokenCache => ({
  get: () => run(Effect.flatMap(cache, (c) => Effect.map(c.get, Option.getOrUndefined))),
  set: (token) => run(Effect.flatMap(cache, (c) => c.set(token))),
  clear: () => run(Effect.flatMap(cache, (c) => c.clear ?? Effect.void))
})

/**
 * A token cache in a file, for plain code: `TokenCache.file(path)` behind Promise methods (atomic writes, mode 0600;
 * an unreadable or invalid file reads as none; shared safely by the processes of one machine: every write a
 * compare-and-set that is atomic on its own; a directory or file another user can write is refused with a
 * ConfigurationError; an empty path or the root throws one at once). Pass it as
 * `tokenCache` to `AsyncClientCredentials`, `AsyncAuthorizationCode` or `AsyncServiceClient`.
 *
 * @example
 * ```ts
 * import { AsyncAuthorizationCode, fileTokenCache } from "@service-sdk/effect/promise"
 *
 * const tokenCache = fileTokenCache(`${process.env.HOME}/.config/my-app/tokens.json`)
 * await using auth = new AsyncAuthorizationCode({ redirectUri: "http://127.0.0.1:8080/callback", tokenCache })
 * ```
 *
 * @since 1.0.0
 */
export const fileTokenCache = (path: string): FileTokenCache => {
  const cache = runSyncOrThrow(
    TokenCache.file(checkPath("fileTokenCache", path, "file")).pipe(Effect.provide(NodeFileSystem.layer))
  )
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
 * @since 1.0.0
 */
export const directoryTokenStore = (path: string): DirectoryTokenStore => {
  const made = TokenStore.directory(checkPath("directoryTokenStore", path, "directory")).pipe(
    Effect.provide(NodeFileSystem.layer)
  )
  // the directory is created asynchronously: every use waits for the one creation
  let ready: Promise<TokenStore.TokenStore> | undefined
  const store = Effect.promise(() => {
    ready ??= runPromise(made)
    return ready
  })
  const plain: DirectoryTokenStore = (userId) => plainView(Effect.map(store, (s) => s(userId)))
  effectStores.set(plain, store)
  return plain
}

/**
 * The JSON form of a token (`{ access_token, expires_at, ... }`, the secrets in clear), to keep it in a store of
 * your own; {@link tokenInfoFromJson} reads it back.
 *
 * @since 1.0.0
 */
export const tokenInfoToJson = (token: TokenInfo): TokenInfoJson => JSON.parse(TokenCache.encodeJson(token))

/**
 * A token from its JSON form (or the text of it); `undefined` when it is not one.
 *
 * @since 1.0.0
 */
export const tokenInfoFromJson = (json: unknown): TokenInfo | undefined => {
  if (json instanceof TokenInfo) return json
  if (json === undefined || json === null) return undefined
  return Option.getOrUndefined(TokenCache.decodeJson(typeof json === "string" ? json : JSON.stringify(json)))
}
