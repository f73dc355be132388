/**
 * `TokenCache.browser`: one token entry shared by every tab of an origin. The entry lives in IndexedDB, the lock is
 * a Web Lock (`navigator.locks`), both coordinated by the browser for all the origin's tabs:
 *
 * - `withLock` holds the Web Lock `service-sdk/token-cache/<key>` while the renewal runs; a tab that closes or crashes
 *   releases it (the browser does), so the next tab goes on and nothing waits for a timeout.
 * - `compareAndSet` is one IndexedDB `readwrite` transaction (read, compare, write): IndexedDB runs the transactions
 *   of all tabs on one store one after another, so two tabs that expected the same entry never both write.
 * - `get` reads the database each time: a change committed by one tab is seen by the next read of every other tab,
 *   with no reload. (Not `localStorage`: Chromium delivers one tab's write to the others asynchronously, so a tab
 *   that has just taken the lock could still read the token its holder has rotated out.)
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ConfigurationError, TokenCacheError } from "../../ServiceError.js"
import type { TokenCache } from "../../TokenCache.js"
import { decodeText, encodeText, type TokenInfo } from "../../TokenInfo.js"
import { sameTokenJson } from "@service-sdk/shared/tokenJson"

/** The options of `TokenCache.browser`. */
export interface Options {
  /** The entry's name, so one origin can keep several sign-ins apart (default `"default"`). */
  readonly key?: string | undefined
}

/** The IndexedDB database and object store of the entries (one record per `key`). */
export const DATABASE = "service-sdk"
export const STORE = "token-cache"
/** The Web Lock of an entry. */
export const lockName = (key: string): string => `service-sdk/token-cache/${key}`

interface Locks {
  readonly request: (
    name: string,
    options: { readonly mode: "exclusive"; readonly signal: AbortSignal },
    callback: () => Promise<void>
  ) => Promise<unknown>
}

const platform = (): { readonly locks: Locks; readonly indexedDB: IDBFactory } | string => {
  const nav = (globalThis as { readonly navigator?: { readonly locks?: Partial<Locks> } }).navigator
  if (typeof nav?.locks?.request !== "function") {
    return "TokenCache.browser needs the Web Locks API (navigator.locks), which this environment lacks: it is in every current browser, on pages served over https or from a loopback address"
  }
  const idb = (globalThis as { readonly indexedDB?: IDBFactory }).indexedDB
  if (idb === undefined || typeof idb.open !== "function") {
    return "TokenCache.browser needs IndexedDB, which this environment lacks (a private window may disable it)"
  }
  return { locks: nav.locks as Locks, indexedDB: idb }
}

const failure = (what: string) => (cause: unknown) =>
  new TokenCacheError({
    message: `browser token cache: ${what} failed${cause instanceof Error && cause.name !== "Error" ? ` (${cause.name})` : ""}`,
    cause
  })

/** One transaction on the store: `body` queues its requests synchronously; resolves when the transaction committed. */
const transact = <A>(
  db: IDBDatabase,
  mode: IDBTransactionMode,
  body: (store: IDBObjectStore, done: (value: A) => void) => void
): Promise<A> =>
  new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, mode)
    let result: A
    tx.oncomplete = () => resolve(result)
    tx.onerror = () => reject(tx.error)
    tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"))
    body(tx.objectStore(STORE), (value) => {
      result = value
    })
  })

const same = (expected: Option.Option<TokenInfo>, stored: unknown): boolean => {
  const current = typeof stored === "string" ? decodeText(stored) : undefined
  const json = (token: TokenInfo | undefined) =>
    token === undefined
      ? undefined
      : {
          access_token: Redacted.value(token.accessToken),
          refresh_token: token.refreshToken === undefined ? undefined : Redacted.value(token.refreshToken)
        }
  return sameTokenJson(json(Option.getOrUndefined(expected)), json(current))
}

/** The cache; a ConfigurationError where the platform lacks Web Locks or IndexedDB, or for an empty key. */
export const make = (options?: Options): Effect.Effect<TokenCache, ConfigurationError> =>
  Effect.suspend(() => {
    const key = options?.key ?? "default"
    if (typeof key !== "string" || key === "") {
      return Effect.fail(new ConfigurationError({ message: "TokenCache.browser: key must be a non-empty string" }))
    }
    const found = platform()
    if (typeof found === "string") return Effect.fail(new ConfigurationError({ message: found }))
    const { locks, indexedDB } = found

    let opened: Promise<IDBDatabase> | undefined
    const open = () =>
      (opened ??= new Promise<IDBDatabase>((resolve, reject) => {
        const request = indexedDB.open(DATABASE, 1)
        request.onupgradeneeded = () => {
          if (!request.result.objectStoreNames.contains(STORE)) request.result.createObjectStore(STORE)
        }
        request.onsuccess = () => {
          const db = request.result
          // another tab upgrading the database: let it, and open again on the next use
          db.onversionchange = () => {
            db.close()
            opened = undefined
          }
          resolve(db)
        }
        request.onerror = () => {
          opened = undefined
          reject(request.error)
        }
      }))
    const run = <A>(what: string, body: (db: IDBDatabase) => Promise<A>) =>
      Effect.tryPromise({ try: () => open().then(body), catch: failure(what) })

    const get = run("reading the entry", (db) =>
      transact<unknown>(db, "readonly", (store, done) => {
        const read = store.get(key)
        read.onsuccess = () => done(read.result)
      })
    ).pipe(Effect.map((stored) => Option.fromUndefinedOr(typeof stored === "string" ? decodeText(stored) : undefined)))

    const set = (token: TokenInfo) =>
      run("writing the entry", (db) =>
        transact<void>(db, "readwrite", (store) => {
          store.put(encodeText(token), key)
        })
      )

    const clear = run("clearing the entry", (db) =>
      transact<void>(db, "readwrite", (store) => {
        store.delete(key)
      })
    )

    // one readwrite transaction: the read, the comparison and the write happen with no other tab's write between
    const compareAndSet = (expected: Option.Option<TokenInfo>, next: TokenInfo) =>
      run("compare-and-set of the entry", (db) =>
        transact<boolean>(db, "readwrite", (store, done) => {
          const read = store.get(key)
          read.onsuccess = () => {
            if (same(expected, read.result)) {
              store.put(encodeText(next), key)
              done(true)
            } else {
              done(false)
            }
          }
        })
      )

    /**
     * Holds the origin-wide Web Lock around `self`. Waiting for the lock is interruptible (the request is aborted);
     * the lock is released when `self` ends however it ends, and by the browser when the tab goes away.
     */
    const withLock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          const controller = new AbortController()
          let release!: () => void
          const held = new Promise<void>((resolve) => {
            release = resolve
          })
          let done = false
          const granted = new Promise<void>((resolve, reject) => {
            locks
              .request(lockName(key), { mode: "exclusive", signal: controller.signal }, () => {
                // released before it was granted (an interrupted wait): give it back at once
                if (done) return Promise.resolve()
                resolve()
                return held
              })
              .catch(reject)
          })
          // an aborted request rejects `granted`, which nobody may be waiting on any more
          granted.catch(() => {})
          return {
            granted,
            release: () => {
              done = true
              controller.abort()
              release()
            }
          }
        }),
        (lock) =>
          Effect.andThen(Effect.tryPromise({ try: () => lock.granted, catch: failure("taking the Web Lock") }), self),
        (lock) => Effect.sync(lock.release)
      )

    return Effect.succeed({ get, set, clear, withLock, compareAndSet } satisfies TokenCache)
  })
