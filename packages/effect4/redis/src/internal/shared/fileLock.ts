// Copied from packages/shared/src/fileLock.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The lock file of a token file, shared by the processes of one machine and by both Effect lines (one protocol:
 * processes of either line may share one token file).
 *
 * `<path>.lock` holds `{ owner, pid, host, ttl }` (and `pidns`, the holder's PID namespace, where the OS has one).
 * It is written whole to a temp file and hard-linked to its name (`link` fails when the name exists: exclusive
 * creation, never a half-written lock), kept alive by touching its mtime (the heartbeat), and released by its owner
 * only. It is stale, and taken over, once its mtime is older than its `ttl` (never longer than ours), at once when
 * its holder was a process of this host and PID namespace that is gone, and at once when it is not a regular file
 * or its mtime lies in the future. A lock file that cannot be read is judged by its mtime alone.
 */
import { constants } from "node:fs"
import * as fs from "node:fs/promises"
import { readlinkSync } from "node:fs"
import { hostname } from "node:os"
import { dirname } from "node:path"

/** How a lock behaves, in milliseconds. */
export interface FileLockOptions {
  /** How long a lock outlives a holder that stopped keeping it alive (default 10 s). */
  readonly ttlMillis: number
  /** How long to wait for the lock before giving up (default 30 s). */
  readonly waitMillis: number
}

export const DEFAULT_LOCK_OPTIONS: FileLockOptions = { ttlMillis: 10_000, waitMillis: 30_000 }

/** What a lock file says about its holder. */
export interface Holder {
  readonly owner: string
  readonly pid: number
  readonly host: string
  readonly ttl: number
  readonly pidns?: string
}

/** Why the lock could not be taken: `code` names the case for the caller's error message. */
export class FileLockError extends Error {
  constructor(
    readonly code: "timeout" | "io",
    message: string,
    override readonly cause?: unknown
  ) {
    super(message)
    this.name = "FileLockError"
  }
}

const HOST = hostname()
const PIDNS = (() => {
  try {
    return readlinkSync("/proc/self/ns/pid")
  } catch {
    return undefined
  }
})()

export const lockPathOf = (path: string): string => `${path}.lock`

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

export const parseHolder = (text: string): Holder | undefined => {
  try {
    const json = JSON.parse(text) as Partial<Holder>
    return typeof json.owner === "string" &&
      typeof json.pid === "number" &&
      typeof json.host === "string" &&
      typeof json.ttl === "number" &&
      json.ttl > 0
      ? (json as Holder)
      : undefined
  } catch {
    return undefined
  }
}

/** Whether process `pid` of this host is gone (`kill(pid, 0)`: ESRCH; EPERM means alive, another user's). */
const processGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return errnoOf(error) === "ESRCH"
  }
}

const randomSuffix = () => Math.floor(Math.random() * 2 ** 31).toString(36)

/** A holder for this process: a fresh owner id per acquisition. */
export const newHolder = (options: FileLockOptions): Holder => ({
  owner: `${process.pid}-${randomSuffix()}${randomSuffix()}-${HOST}`,
  pid: process.pid,
  host: HOST,
  ttl: Math.max(1, Math.round(options.ttlMillis)),
  ...(PIDNS !== undefined ? { pidns: PIDNS } : {})
})

/** The lock's text: undefined when it is gone, "" when it cannot be read (judged by its mtime alone). */
const readLock = async (lockPath: string): Promise<string | undefined> => {
  let handle: fs.FileHandle | undefined
  try {
    // no link followed, no FIFO waited on
    handle = await fs.open(lockPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    const stat = await handle.stat()
    if (!stat.isFile()) return ""
    return await handle.readFile("utf8")
  } catch (error) {
    return errnoOf(error) === "ENOENT" ? undefined : ""
  } finally {
    await handle?.close()
  }
}

/** One try: true when the lock is now ours. The content is complete before the name appears (temp + link). */
const createOnce = async (lockPath: string, holder: Holder): Promise<boolean> => {
  const tmp = `${lockPath}.${randomSuffix()}.tmp`
  try {
    await fs.writeFile(tmp, JSON.stringify(holder), { flag: "wx", mode: 0o600 })
    await fs.link(tmp, lockPath)
    return true
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return false
    throw error
  } finally {
    await fs.rm(tmp, { force: true }).catch(() => {})
  }
}

const tryCreate = async (lockPath: string, holder: Holder): Promise<boolean> => {
  try {
    return await createOnce(lockPath, holder)
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error
    // a missing directory is created (0700), as a write of the entry would
    await fs.mkdir(dirname(lockPath), { recursive: true, mode: 0o700 })
    return createOnce(lockPath, holder)
  }
}

/** The text of the existing lock when it is stale (see the module's comment), else undefined. */
const staleLock = async (lockPath: string, ttlMillis: number): Promise<string | undefined> => {
  const text = await readLock(lockPath)
  if (text === undefined) return undefined
  const holder = parseHolder(text)
  const sameNamespace = holder?.pidns === undefined || PIDNS === undefined || holder.pidns === PIDNS
  if (holder !== undefined && holder.host === HOST && sameNamespace && holder.pid !== process.pid) {
    if (processGone(holder.pid)) return text
  }
  let stat: import("node:fs").Stats
  try {
    stat = await fs.lstat(lockPath)
  } catch {
    return undefined
  }
  if (!stat.isFile()) return text
  const now = Date.now()
  const mtime = stat.mtimeMs
  if (mtime > now + 1_000) return text
  const ttl = Math.min(holder?.ttl ?? ttlMillis, ttlMillis)
  return now > mtime + ttl ? text : undefined
}

/** Removes a stale lock if it still is the one judged stale; true when it was removed. */
const takeOver = async (lockPath: string, judged: string): Promise<boolean> => {
  const again = await readLock(lockPath)
  if (again === undefined || again !== judged) return false
  await fs.rm(lockPath, { force: true, recursive: false }).catch(async (error) => {
    // a directory squatting on the name
    if (errnoOf(error) === "ERR_FS_EISDIR" || errnoOf(error) === "EISDIR") await fs.rmdir(lockPath)
    else throw error
  })
  return true
}

const pause = (millis: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, millis)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/**
 * Polls until the lock of `path` is ours and returns its holder. `onTakeOver` hears of a stale lock taken over.
 * Aborting `signal` stops the wait (a lock created before that is released).
 */
export const acquire = async (
  path: string,
  options: FileLockOptions,
  hooks: { readonly signal?: AbortSignal | undefined; readonly onTakeOver?: (lockPath: string) => void } = {}
): Promise<Holder> => {
  const lockPath = lockPathOf(path)
  const holder = newHolder(options)
  const start = Date.now()
  while (true) {
    let created: boolean
    try {
      created = await tryCreate(lockPath, holder)
    } catch (error) {
      throw new FileLockError("io", `cannot create the lock file ${lockPath}`, error)
    }
    if (created) {
      if (hooks.signal?.aborted) {
        await release(path, holder)
        throw hooks.signal.reason
      }
      return holder
    }
    const stale = await staleLock(lockPath, options.ttlMillis)
    if (stale !== undefined) {
      try {
        if (await takeOver(lockPath, stale)) hooks.onTakeOver?.(lockPath)
      } catch (error) {
        throw new FileLockError("io", `cannot take over the stale lock file ${lockPath}`, error)
      }
      continue
    }
    const waited = Date.now() - start
    if (waited >= options.waitMillis) {
      throw new FileLockError(
        "timeout",
        `gave up waiting for the token lock file ${lockPath} after ${(waited / 1000).toFixed(1)} s: another ` +
          `process holds it (a lock whose holder died is taken over; an unreadable one after ${options.ttlMillis / 1000} s)`
      )
    }
    await pause(Math.max(1, Math.min(Math.round(20 + 40 * Math.random()), options.waitMillis - waited)), hooks.signal)
  }
}

/** Whether the lock of `path` is still held by `holder`. */
export const isHeldBy = async (path: string, holder: Holder): Promise<boolean> => {
  const text = await readLock(lockPathOf(path))
  return text !== undefined && parseHolder(text)?.owner === holder.owner
}

/**
 * Keeps the lock alive while held (touches its mtime every third of its ttl, at most every second); `onLost` hears
 * once that another owner has it. Returns the function that stops the heartbeat.
 */
export const heartbeat = (path: string, holder: Holder, onLost: () => void): (() => void) => {
  const lockPath = lockPathOf(path)
  let lost = false
  const timer = setInterval(
    () => {
      void isHeldBy(path, holder).then(
        async (mine) => {
          if (mine) {
            const now = new Date()
            await fs.utimes(lockPath, now, now).catch(() => {})
          } else if (!lost) {
            lost = true
            onLost()
          }
        },
        () => {}
      )
    },
    Math.max(1, Math.min(1000, Math.floor(holder.ttl / 3)))
  )
  timer.unref()
  return () => clearInterval(timer)
}

/** Removes the lock if it is still `holder`'s. Never throws: a lock that cannot be removed is stale after its ttl. */
export const release = async (path: string, holder: Holder): Promise<string | undefined> => {
  try {
    if (await isHeldBy(path, holder)) await fs.rm(lockPathOf(path), { force: true })
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}
