// Copied from packages/shared/src/fileEntry.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The file cache behind `TokenCache.file` and `TokenStore.directory` of both lines (issue 28): every write (`set`, a
 * renewal's compare-and-set, an `invalid_grant` mark, `clear`) is a compare-and-set on the entry's version that is
 * atomic on its own (`fileCas.ts`); the lock file (`fileLock.ts`) is an optimisation on top; files are read without
 * following links or blocking, in a directory that only we can write (`fileSafety.ts`). Each line supplies the codec
 * (its `TokenInfo`), the comparison, and the Effect around these programs (re-entrant `withLock`, error classes).
 */
import { createHash } from "node:crypto"
import { dirname } from "node:path"
import * as FileCas from "./fileCas.js"
import * as FileLock from "./fileLock.js"
import * as Ops from "./fileOps.js"
import { FileFailure, type Program } from "./fileOps.js"
import * as Safety from "./fileSafety.js"
import { describeCause } from "./redact.js"

/** A directory checked once (a store's users share one). */
export interface DirectoryCheck {
  ok: boolean
}

const MAX_TRIES = 100

/**
 * The programs of one token file. Texts in and out are the stored JSON without its `revision` bookkeeping (it is
 * added on every write; readers of either line ignore it).
 */
export const make = (path: string, options: FileLock.FileLockOptions, checked: DirectoryCheck = { ok: false }) => {
  const dir = dirname(path)
  const entry = FileCas.make(path, {
    ttlMillis: Math.max(1, Math.round(options.ttlMillis)),
    waitMillis: options.waitMillis
  })

  function* checkDir(): Program<void> {
    if (checked.ok) return
    checked.ok = (yield* Safety.checkDirectory(dir)) === "checked"
  }

  function* ensureDir(): Program<void> {
    try {
      yield* Ops.mkdir(dir, true)
    } catch (error) {
      throw new FileFailure(
        "cache",
        `cannot create the directory of the token cache file ${path}: ${describeCause(error)}`,
        error
      )
    }
    yield* checkDir()
  }

  /** The entry's text: undefined when missing, unreadable or not a regular file; a file or directory another user can write fails "config". */
  function* get(): Program<string | undefined> {
    yield* checkDir()
    try {
      const current = yield* entry.read()
      return current._tag === "File" ? current.text : undefined
    } catch (error) {
      if (error instanceof FileFailure && error.kind === "config") throw error
      return undefined
    }
  }

  /** A directory where the entry should be is never written over nor removed. */
  const notADirectory = (what: string, current: FileCas.Current) => {
    if (current._tag === "Irregular" && current.kind === "a directory") {
      throw new FileFailure("cache", `cannot ${what} the token cache file ${path}: it is a directory`)
    }
  }

  /**
   * Writes `text` when `accept` says yes to the entry's text (undefined: missing); retried when another writer got
   * there first. Without `accept` (a `set`) anything but a directory is written over; with it, a file that is there
   * but is not a regular file is not an empty entry: refused rather than written over.
   */
  function* write(text: string, accept?: (current: string | undefined) => boolean): Program<boolean> {
    yield* ensureDir()
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const current = yield* entry.read()
      notADirectory("write", current)
      if (accept !== undefined) {
        if (current._tag === "Irregular") {
          throw new FileFailure("cache", `cannot read the token cache file ${path}: it is ${current.kind}`)
        }
        if (!accept(current._tag === "File" ? current.text : undefined)) return false
      }
      if ((yield* entry.replace(current, FileCas.withRevision(text))) === "Won") return true
    }
    throw new FileFailure("cache", `cannot write the token cache file ${path}: too many concurrent writers`)
  }

  /** Removes the entry and every temp file of it (a write under way is cancelled: a sign-out leaves no copy). */
  function* clear(): Program<void> {
    yield* checkDir()
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const current = yield* entry.read()
      notADirectory("remove", current)
      if (current._tag === "Missing" || (yield* entry.remove(current)) === "Won") break
    }
    yield* entry.sweep(true)
  }

  const lock = FileLock.make(path, options, { ensureDir, sweep: () => entry.sweep(false, { republish: true }) })

  return { path, get, write, clear, lock }
}

export type FileEntry = ReturnType<typeof make>

/**
 * The file name of a user's entry in a directory store: the hex SHA-256 of the id's UTF-16 code units. Fixed
 * length, only `[0-9a-f]`, so no id (`../x`, `a/b`, `.`, empty, huge, non-ASCII) leaves the directory, and distinct
 * ids get distinct names (UTF-16, not UTF-8: UTF-8 would map every lone surrogate to U+FFFD, and two ids to one file).
 */
export const userFileName = (userId: string): string =>
  `${createHash("sha256").update(userId, "utf16le").digest("hex")}.json`
