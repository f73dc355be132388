// Copied from packages/shared/src/fileLock.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The lock file of a token cache file, shared by the processes of one machine and by both Effect lines
 * (docs/decisions.md, 28.3 and 28.4). An optimisation: the entry's compare-and-set is atomic without it (`fileCas.ts`).
 *
 * `<path>.lock` holds `{ owner, pid, host, ns, ttl, revision }`. It is created from nothing by `link` of a complete
 * temp file, kept alive by touching its mtime (the heartbeat), and taken over or released by a compare-and-set on
 * its version (`fileCas.ts`): two waiters that judge one lock stale both try to replace that version, and one wins.
 * A lock is stale when it is not a regular file, cannot be parsed and is older than our TTL, has an mtime in the
 * future, claims a TTL beyond ours, outlived its TTL without a heartbeat, or its holder is provably gone (same host
 * and PID namespace, no such process).
 *
 * Each line wraps these programs in its own `acquireUseRelease`, forks {@link FileLock.heartbeat} while it holds the
 * lock, and makes the hold re-entrant for its fiber.
 */
import * as FileCas from "./fileCas.js"
import * as Ops from "./fileOps.js"
import { FileFailure, type Program } from "./fileOps.js"
import * as Safety from "./fileSafety.js"
import { describeCause } from "./redact.js"

/** How a lock behaves, in milliseconds. */
export interface FileLockOptions {
  /** How long a lock outlives a holder that stopped keeping it alive (default 10 s). */
  readonly ttlMillis: number
  /** How long to wait for the lock before giving up (default 30 s). */
  readonly waitMillis: number
}

export const DEFAULT_LOCK_OPTIONS: FileLockOptions = { ttlMillis: 10_000, waitMillis: 30_000 }

interface Holder extends Safety.Identity {
  readonly owner: string
  readonly ttl: number
  readonly revision: string
}

const parseHolder = (text: string): Partial<Holder> | undefined => {
  try {
    const json = JSON.parse(text) as Partial<Holder> | null
    return json !== null && typeof json === "object" && typeof json.owner === "string" ? json : undefined
  } catch {
    return undefined
  }
}

/** A lock this process holds: the version it wrote. */
export interface Held {
  readonly owner: string
  readonly version: string
}

export const lockPathOf = (path: string): string => `${path}.lock`

/**
 * The lock of `path`. `ensureDir` makes the directory (and checks it); `sweep` runs once the lock is held (what
 * crashed writers of the entry left).
 */
export const make = (
  path: string,
  options: FileLockOptions,
  hooks: { readonly ensureDir: () => Program<void>; readonly sweep: () => Program<void> }
) => {
  const lockPath = lockPathOf(path)
  const ttlMillis = Math.max(1, Math.round(options.ttlMillis))
  const waitMillis = options.waitMillis
  const beatMillis = Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))
  const lock = FileCas.make(lockPath, { ttlMillis, waitMillis })

  /** A failure of the lock's file names the lock file. */
  function* named<A>(program: Program<A>): Program<A> {
    try {
      return yield* program
    } catch (error) {
      if (error instanceof FileFailure && error.kind === "cache") {
        throw new FileFailure("cache", `cannot use the lock file ${lockPath}: ${error.message}`, error.cause)
      }
      throw error
    }
  }

  /** Whether the lock found is stale (see the module's comment). */
  const stale = (current: FileCas.Current, now: number): boolean => {
    if (current._tag === "Missing") return false
    if (current._tag === "Irregular") return true
    if (current.mtimeMs > now + FileCas.FUTURE_SLACK_MS) return true
    const holder = parseHolder(current.text)
    if (holder === undefined) return now > current.mtimeMs + ttlMillis
    if (holder.owner !== undefined && Safety.holderGone(holder)) return true
    // a claimed TTL beyond ours would make us wait longer than we promise our callers: stale (DESIGN section 4);
    // safe because compare-and-set is atomic without the lock, so a wrongly taken lock costs a request, not a token
    const ttl = typeof holder.ttl === "number" && holder.ttl > 0 ? holder.ttl : ttlMillis
    return ttl > ttlMillis || now > current.mtimeMs + ttl
  }

  const describe = (current: FileCas.Current) =>
    current._tag === "Irregular" ? `it is ${current.kind}` : "its holder is gone or stopped keeping it alive"

  /** Polls until the lock is ours (each line makes only the pauses interruptible: a created lock is released). */
  function* acquire(): Program<Held> {
    const owner = Safety.uniqueId()
    const start = yield* Ops.clock()
    yield* named(hooks.ensureDir())
    while (true) {
      const revision = FileCas.newRevision()
      const text = JSON.stringify({ owner, ...Safety.self, ttl: ttlMillis, revision })
      const current = yield* named(lock.read())
      if (current._tag === "Missing") {
        if ((yield* named(lock.replace(current, text))) === "Won") return { owner, version: `r${revision}` }
        continue
      }
      if (stale(current, yield* Ops.fileTime())) {
        // a file cannot be renamed over a directory: one is moved away first (by the same compare-and-set rule)
        if (current._tag === "Irregular" && current.kind === "a directory") {
          if ((yield* named(lock.remove(current))) === "Won") {
            yield* Ops.warn(`removed the token lock file ${lockPath} (${describe(current)})`)
          }
          continue
        }
        if ((yield* named(lock.replace(current, text))) === "Won") {
          yield* Ops.warn(`took over the stale token lock file ${lockPath} (${describe(current)})`)
          return { owner, version: `r${revision}` }
        }
        continue
      }
      const waited = (yield* Ops.clock()) - start
      if (waited >= waitMillis) {
        throw new FileFailure(
          "cache",
          `gave up waiting for the token lock file ${lockPath} after ${(waited / 1000).toFixed(1)} s: another ` +
            `process holds it (a lock whose holder died is taken over; one not kept alive after ${ttlMillis / 1000} s)`
        )
      }
      yield* Ops.sleep(Math.max(1, Math.min(Math.round(20 + 40 * Math.random()), waitMillis - waited)))
    }
  }

  function* ours(held: Held): Program<FileCas.Current | undefined> {
    try {
      const current = yield* lock.read()
      return current.version === held.version ? current : undefined
    } catch {
      return undefined
    }
  }

  /** Keeps the lock alive while held (touches its mtime); a lock lost to another owner is left to it. Never ends. */
  function* heartbeat(held: Held): Program<never> {
    while (true) {
      yield* Ops.sleep(beatMillis)
      if ((yield* ours(held)) === undefined) {
        yield* Ops.warn(`lost the token lock file ${lockPath}: another process may renew too`)
      } else {
        yield* Ops.ignore(Ops.touch(lockPath))
      }
    }
  }

  /** Never fails: a lock that cannot be removed is stale after its ttl. */
  function* release(held: Held): Program<void> {
    try {
      const mine = yield* ours(held)
      if (mine !== undefined) yield* lock.remove(mine)
    } catch (error) {
      yield* Ops.warn(`cannot remove the token lock file ${lockPath}: ${describeCause(error)}`)
    }
  }

  /** What runs first under the lock: the sweeps of the lock's and the entry's leftovers. */
  function* sweep(): Program<void> {
    yield* lock.sweep(false)
    yield* hooks.sweep()
  }

  return { lockPath, acquire, heartbeat, release, sweep }
}

export type FileLock = ReturnType<typeof make>
