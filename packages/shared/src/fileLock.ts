/**
 * The lock file of a token cache file, shared by the processes of one machine and by both Effect lines
 * (docs/decisions.md, 28.3 and 28.4). An optimisation: the entry's compare-and-set is atomic without it (`fileCas.ts`).
 *
 * `<path>.lock` holds `{ owner, pid, host, ns, ttl, revision }`. It is created from nothing by `link` of a complete
 * temp file, kept alive by touching its mtime (the heartbeat), and taken over or released by a compare-and-set on
 * its version (`fileCas.ts`): two waiters that judge one lock stale both try to replace that version, and one wins.
 * A lock is stale when it is not a regular file, cannot be parsed and is older than our TTL, has an mtime in the
 * future, outlived the TTL its holder wrote in it (capped at {@link MAX_LOCK_TTL_MILLIS}; ours when it wrote none)
 * without a heartbeat, or its holder is provably gone (same host and PID namespace, no such process). A waiter
 * honours its holder's TTL, not its own: processes configured with different `lockTtl` still single-flight
 * (DESIGN section 9, "Locks").
 *
 * A holder knows how long its lock is surely its own (its lease: the last time it saw the lock file carry its
 * version and touched it, plus its TTL, the earliest a waiter may take it over). {@link vouch} is what a holder runs
 * before it acts on what it read under the lock (before a renewal sends the refresh token it read): it fails with a
 * "lockLost" FileFailure when the lock was taken over, so a holder paused past its TTL never sends a refresh token
 * another process may have sent meanwhile.
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

/** The longest TTL a waiter honours from a lock's holder: a lock that claims more is judged by this. */
export const MAX_LOCK_TTL_MILLIS = 5 * 60_000

/** The TTL a waiter honours: the one `claimed` by the lock's holder, capped; `fallback` (ours) when it claims none. */
export const honouredTtl = (claimed: unknown, fallback: number): number =>
  typeof claimed === "number" && Number.isFinite(claimed) && claimed > 0
    ? Math.min(claimed, MAX_LOCK_TTL_MILLIS)
    : Math.min(fallback, MAX_LOCK_TTL_MILLIS)

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

/**
 * A lock this process holds: the version it wrote, and its lease: `confirmedAt` (file-system time) is a moment at
 * which the lock file surely carried our version and an mtime no older than it; `lost` once it was seen taken over.
 */
export interface Held {
  readonly owner: string
  readonly version: string
  readonly lease: { confirmedAt: number; lost: boolean }
  /**
   * Set when no lock could be made because the file system makes no hard links: nothing read under such a hold is
   * vouched for (a renewal fails with this), but a sign-out (`clear`) still removes the entry.
   */
  readonly unlocked?: FileFailure
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
        throw new FileFailure(
          "cache",
          `cannot use the lock file ${lockPath}: ${error.message}`,
          error.cause,
          error.reason
        )
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
    // the holder's TTL, not ours (DESIGN section 9): a holder with a longer `lockTtl` keeps its lock alive by its
    // heartbeat, and taking it over at once made two refreshes per expiry with one refresh token. Capped, so that a
    // hostile or mistaken lock cannot stall the waiters for more than 5 minutes (they give up after `lockWait`).
    return now > current.mtimeMs + honouredTtl(holder.ttl, ttlMillis)
  }

  const describe = (current: FileCas.Current) =>
    current._tag === "Irregular" ? `it is ${current.kind}` : "its holder is gone or stopped keeping it alive"

  /**
   * Polls until the lock is ours (each line makes only the pauses interruptible: a created lock is released). On a
   * file system without hard links no lock can be made: an `unlocked` hold (see {@link Held}).
   */
  function* acquire(): Program<Held> {
    try {
      return yield* poll()
    } catch (error) {
      if (!(error instanceof FileFailure && error.reason === "noLinks")) throw error
      const now = yield* Ops.fileTime()
      return { owner: "", version: "", lease: { confirmedAt: now, lost: true }, unlocked: error }
    }
  }

  function* poll(): Program<Held> {
    const owner = Safety.uniqueId()
    const start = yield* Ops.clock()
    yield* named(hooks.ensureDir())
    while (true) {
      const revision = FileCas.newRevision()
      const text = JSON.stringify({ owner, ...Safety.self, ttl: ttlMillis, revision })
      const current = yield* named(lock.read())
      // before the write: the lock file's mtime is no older than this
      const now = yield* Ops.fileTime()
      const held = (): Held => ({ owner, version: `r${revision}`, lease: { confirmedAt: now, lost: false } })
      if (current._tag === "Missing") {
        if ((yield* named(lock.replace(current, text))) === "Won") return held()
        continue
      }
      if (stale(current, now)) {
        // a file cannot be renamed over a directory: one is moved away first (by the same compare-and-set rule)
        if (current._tag === "Irregular" && current.kind === "a directory") {
          if ((yield* named(lock.remove(current))) === "Won") {
            yield* Ops.warn(`removed the token lock file ${lockPath} (${describe(current)})`)
          }
          continue
        }
        if ((yield* named(lock.replace(current, text))) === "Won") {
          yield* Ops.warn(`took over the stale token lock file ${lockPath} (${describe(current)})`)
          return held()
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

  /** Whether the lock file carries our version: "unknown" when it cannot be read now (not a loss). */
  function* stillOurs(held: Held): Program<boolean | "unknown"> {
    try {
      return (yield* lock.read()).version === held.version
    } catch {
      return "unknown"
    }
  }

  /** How long a lease lasts: our TTL as every waiter honours it. */
  const leaseMillis = honouredTtl(ttlMillis, ttlMillis)

  /**
   * Renews the lease: the lock file still carries our version, is touched, and still carries it after the touch
   * (a touch that landed on a new holder's file is not ours). False, and `lost`, when it was taken over; false alone
   * when the lock file cannot be read now.
   */
  function* renew(held: Held): Program<boolean> {
    if (held.lease.lost || held.unlocked !== undefined) return false
    const before = yield* Ops.fileTime()
    const seen = yield* stillOurs(held)
    if (seen === "unknown") return false
    if (seen) {
      yield* Ops.ignore(Ops.touch(lockPath))
      const after = yield* stillOurs(held)
      if (after === "unknown") return false
      if (after) {
        held.lease.confirmedAt = Math.max(held.lease.confirmedAt, before)
        return true
      }
    }
    if (!held.lease.lost) {
      held.lease.lost = true
      yield* Ops.warn(
        `lost the token lock file ${lockPath} to another process (this one was paused past the lock's TTL)`
      )
    }
    return false
  }

  /** Keeps the lock alive while held (renews the lease); a lock lost to another owner is left to it. Never ends. */
  function* heartbeat(held: Held): Program<never> {
    while (true) {
      yield* Ops.sleep(held.unlocked === undefined ? beatMillis : MAX_LOCK_TTL_MILLIS)
      if (!held.lease.lost) yield* renew(held)
    }
  }

  /**
   * Vouches that the lock is still ours, now: at once while more than half the lease is left, else by renewing it.
   * Fails with a "lockLost" FileFailure when it was taken over: what was read under it must not be acted on.
   */
  function* vouch(held: Held): Program<void> {
    if (held.unlocked !== undefined) throw held.unlocked
    if (!held.lease.lost && (yield* Ops.fileTime()) < held.lease.confirmedAt + leaseMillis / 2) return
    if (yield* renew(held)) return
    if (!held.lease.lost) {
      throw new FileFailure("cache", `cannot read the token lock file ${lockPath} to check that it is still held`)
    }
    throw new FileFailure(
      "cache",
      `lost the token lock file ${lockPath} to another process while holding it (this process was paused for ` +
        "longer than the lock's TTL); nothing was sent with what was read under it: try again",
      undefined,
      "lockLost"
    )
  }

  /** Never fails: a lock that cannot be removed is stale after its ttl. */
  function* release(held: Held): Program<void> {
    if (held.unlocked !== undefined) return
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

  return { lockPath, acquire, heartbeat, vouch, release, sweep }
}

export type FileLock = ReturnType<typeof make>
