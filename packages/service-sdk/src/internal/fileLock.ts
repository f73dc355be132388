/**
 * The lock file of a token cache file, shared by the processes of one machine (docs/decisions.md, decision 27 and
 * issue 28). An optimisation: the entry's compare-and-set is atomic without it (`fileCas.ts`).
 *
 * `<path>.lock` holds `{ owner, pid, host, ns, ttl, revision }`. It is created from nothing by `link` of a complete
 * temp file, kept alive by touching its mtime (the heartbeat), and taken over or released by a compare-and-set on
 * its version (`fileCas.ts`): two waiters that judge one lock stale both try to replace that version, and one wins.
 * A lock is stale when it is not a regular file, cannot be parsed and is older than our TTL, has an mtime in the
 * future, claims a TTL beyond ours, outlived its TTL without a heartbeat, or its holder is provably gone (same host
 * and PID namespace, no such process).
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import { type ConfigurationError, TokenCacheError } from "../ServiceError.js"
import * as FileCas from "./fileCas.js"
import * as Safety from "./fileSafety.js"
import { describeCause } from "./redact.js"

export interface FileLockOptions {
  /** How long a lock outlives a holder that stopped keeping it alive (default 10 s). */
  readonly ttl: Duration.Duration
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly wait: Duration.Duration
}

export const defaultOptions: FileLockOptions = { ttl: Duration.seconds(10), wait: Duration.seconds(30) }

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

const FUTURE_SLACK_MS = 1000

/**
 * `withLock` over the lock file of `path`: `use` runs while this process holds it. `ensureDir` makes the directory;
 * `sweep` runs once the lock is held (temp files of crashed writers).
 */
export const make = (
  fs: FileSystem.FileSystem,
  path: string,
  options: FileLockOptions,
  hooks: {
    readonly ensureDir: Effect.Effect<void, TokenCacheError | ConfigurationError>
    readonly sweep: Effect.Effect<void>
  }
) => {
  const lockPath = `${path}.lock`
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const beatMillis = Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))
  const lock = FileCas.make(fs, lockPath, { ttlMillis, waitMillis })

  const lockError = (message: string, cause?: unknown) =>
    new TokenCacheError({ message: cause === undefined ? message : `${message}: ${describeCause(cause)}` })
  const named = <A>(self: Effect.Effect<A, TokenCacheError | ConfigurationError>) =>
    Effect.catchTag(self, "TokenCacheError", (error) =>
      Effect.fail(lockError(`cannot use the lock file ${lockPath}`, error.message))
    )

  /** Whether the lock found is stale (see the module's comment). */
  const stale = (current: FileCas.Current): boolean => {
    if (current._tag === "Missing") return false
    if (current._tag === "Irregular") return true
    const now = Date.now()
    if (current.mtimeMs > now + FUTURE_SLACK_MS) return true
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

  /** Polls until the lock is ours; only the pauses are interruptible (a created lock is always released). */
  const acquire = Effect.gen(function* () {
    const owner = `${Safety.uniqueId()}`
    const start = yield* Clock.currentTimeMillis
    yield* named(hooks.ensureDir)
    while (true) {
      const revision = FileCas.newRevision()
      const text = JSON.stringify({ owner, ...Safety.self(), ttl: ttlMillis, revision })
      const current = yield* named(lock.read)
      if (current._tag === "Missing") {
        if ((yield* named(lock.replace(current, text))) === "Won") return { owner, version: `r${revision}` }
        continue
      }
      if (stale(current)) {
        // a file cannot be renamed over a directory: one is moved away first (by the same compare-and-set rule)
        if (current._tag === "Irregular" && current.kind === "a directory") {
          if ((yield* named(lock.remove(current))) === "Won") {
            yield* Effect.logWarning(`removed the token lock file ${lockPath} (${describe(current)})`)
          }
          continue
        }
        if ((yield* named(lock.replace(current, text))) === "Won") {
          yield* Effect.logWarning(`took over the stale token lock file ${lockPath} (${describe(current)})`)
          return { owner, version: `r${revision}` }
        }
        continue
      }
      const waited = (yield* Clock.currentTimeMillis) - start
      if (waited >= waitMillis) {
        return yield* lockError(
          `gave up waiting for the token lock file ${lockPath} after ${(waited / 1000).toFixed(1)} s: another ` +
            `process holds it (a lock whose holder died is taken over; one not kept alive after ${ttlMillis / 1000} s)`
        )
      }
      const pause = Math.max(1, Math.min(Math.round(20 + 40 * (yield* Random.next)), waitMillis - waited))
      yield* Effect.interruptible(Effect.sleep(Duration.millis(pause)))
    }
  })

  type Held = { readonly owner: string; readonly version: string }

  const ours = (held: Held) =>
    Effect.map(Effect.either(lock.read), (read) =>
      read._tag === "Right" && read.right.version === held.version ? read.right : undefined
    )

  /** Keeps the lock alive while held (touches its mtime); a lock lost to another owner is left to it. */
  const heartbeat = (held: Held) =>
    Effect.forever(
      Effect.zipRight(
        Effect.sleep(Duration.millis(beatMillis)),
        Effect.flatMap(ours(held), (mine) => {
          if (mine === undefined)
            return Effect.logWarning(`lost the token lock file ${lockPath}: another process may renew too`)
          const now = new Date()
          return Effect.ignore(fs.utimes(lockPath, now, now))
        })
      )
    )

  /** Never fails: a lock that cannot be removed is stale after its ttl. */
  const release = (held: Held) =>
    Effect.flatMap(ours(held), (mine) => (mine === undefined ? Effect.void : Effect.asVoid(lock.remove(mine)))).pipe(
      Effect.catchAll((cause) =>
        Effect.logWarning(`cannot remove the token lock file ${lockPath}: ${describeCause(cause)}`)
      )
    )

  return <A, E, R>(use: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError | ConfigurationError, R> =>
    Effect.acquireUseRelease(
      acquire,
      (held) =>
        Effect.flatMap(Effect.fork(heartbeat(held)), (beat) =>
          Effect.ensuring(Effect.zipRight(Effect.zipRight(lock.sweep(false), hooks.sweep), use), Fiber.interrupt(beat))
        ),
      release
    )
}
