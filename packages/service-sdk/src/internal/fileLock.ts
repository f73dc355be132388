/**
 * The lock file of a token cache file, shared by the processes of one machine (docs/decisions.md, decision 27).
 *
 * `<path>.lock` holds `{ owner, pid, host, ttl }`. It is written whole to a temp file and hard-linked to its name
 * (`link` fails when the name exists: exclusive creation, never a half-written lock), kept alive by touching its
 * mtime (the heartbeat), and released by its owner only. It is stale, and taken over, once its mtime is older than
 * its `ttl`, or at once when its holder was a process of this host that is gone. A lock file that cannot be read
 * (garbage, another user's) is stale by its mtime alone.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import { hostname } from "node:os"
import { TokenCacheError } from "../ServiceError.js"
import { describeCause, safeCause } from "./redact.js"

export interface FileLockOptions {
  /** How long a lock outlives a holder that stopped keeping it alive (default 10 s). */
  readonly ttl: Duration.Duration
  /** How long to wait for the lock before failing with TokenCacheError (default 30 s). */
  readonly wait: Duration.Duration
}

export const defaultOptions: FileLockOptions = { ttl: Duration.seconds(10), wait: Duration.seconds(30) }

interface Holder {
  readonly owner: string
  readonly pid: number
  readonly host: string
  readonly ttl: number
}

const HOST = hostname()

const parseHolder = (text: string): Holder | undefined => {
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
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}

const lockError = (message: string, cause?: unknown) =>
  new TokenCacheError({
    message: cause === undefined ? message : `${message}: ${describeCause(cause)}`,
    cause: cause === undefined ? undefined : safeCause(cause)
  })

const reason = (cause: { readonly _tag: string; readonly reason?: string }) =>
  cause._tag === "SystemError" ? cause.reason : undefined

/**
 * `withLock` over the lock file of `path`: `use` runs while this process holds it. `dir` is created (0700) if needed.
 */
export const make = (fs: FileSystem.FileSystem, path: string, dir: string, options: FileLockOptions) => {
  const lockPath = `${path}.lock`
  const ttlMillis = Math.max(1, Math.round(Duration.toMillis(options.ttl)))
  const waitMillis = Duration.toMillis(options.wait)
  const beatMillis = Math.max(1, Math.min(1000, Math.floor(ttlMillis / 3)))

  const suffix = Effect.map(Random.nextIntBetween(0, 2 ** 31), (n) => n.toString(36))

  /** One try: true when the lock is now ours. The content is complete before the name appears (temp + link). */
  const createOnce = (holder: Holder) =>
    Effect.gen(function* () {
      const tmp = `${lockPath}.${yield* suffix}.tmp`
      // removed whatever happens (a full disk, an interruption): no temp file is left behind
      return yield* Effect.gen(function* () {
        yield* fs.writeFileString(tmp, JSON.stringify(holder), { flag: "wx", mode: 0o600 })
        return yield* fs.link(tmp, lockPath).pipe(
          Effect.as(true),
          Effect.catchIf(
            (cause) => reason(cause) === "AlreadyExists",
            () => Effect.succeed(false)
          )
        )
      }).pipe(Effect.ensuring(fs.remove(tmp).pipe(Effect.ignore)))
    })

  const tryCreate = (holder: Holder) =>
    createOnce(holder).pipe(
      // a missing directory is created (0700), as a write of the entry would
      Effect.catchIf(
        (cause) => reason(cause) === "NotFound",
        () => Effect.zipRight(fs.makeDirectory(dir, { recursive: true, mode: 0o700 }), createOnce(holder))
      ),
      Effect.mapError((cause) => lockError(`cannot create the lock file ${lockPath}`, cause))
    )

  /** The lock's text, or none when it is gone. */
  const readLock = fs.readFileString(lockPath).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (cause) => reason(cause) === "NotFound",
      () => Effect.succeed(Option.none<string>())
    ),
    // unreadable (another user's, a directory): judged by its mtime alone
    Effect.orElseSucceed(() => Option.some(""))
  )

  /** Removes a stale lock if it still is the one judged stale. */
  const takeOver = (judged: string) =>
    Effect.gen(function* () {
      const again = yield* readLock
      if (Option.isNone(again) || again.value !== judged) return
      yield* fs.remove(lockPath).pipe(
        Effect.catchIf(
          (cause) => reason(cause) === "NotFound",
          () => Effect.void
        ),
        Effect.mapError((cause) => lockError(`cannot take over the stale lock file ${lockPath}`, cause))
      )
      yield* Effect.logWarning(`took over the stale token lock file ${lockPath} (its holder is gone)`)
    })

  /** Whether the existing lock is stale: its holder gone (this host), or not kept alive for its ttl. */
  const staleLock = Effect.gen(function* () {
    const text = yield* readLock
    if (Option.isNone(text)) return Option.none<string>()
    const holder = parseHolder(text.value)
    if (holder !== undefined && holder.host === HOST && holder.pid !== process.pid && processGone(holder.pid)) {
      return text
    }
    const info = yield* Effect.option(fs.stat(lockPath))
    const mtime = Option.flatMap(info, (stat) => stat.mtime)
    if (Option.isNone(mtime)) return Option.none<string>()
    const now = yield* Clock.currentTimeMillis
    const ttl = holder?.ttl ?? ttlMillis
    return now > mtime.value.getTime() + ttl ? text : Option.none<string>()
  })

  /** Polls until the lock is ours; only the pauses are interruptible (a created lock is always released). */
  const acquire = Effect.gen(function* () {
    const holder: Holder = {
      owner: `${process.pid}-${yield* suffix}${yield* suffix}-${HOST}`,
      pid: process.pid,
      host: HOST,
      ttl: ttlMillis
    }
    const start = yield* Clock.currentTimeMillis
    while (true) {
      if (yield* tryCreate(holder)) return holder
      const stale = yield* staleLock
      if (Option.isSome(stale)) {
        yield* takeOver(stale.value)
        continue
      }
      const waited = (yield* Clock.currentTimeMillis) - start
      if (waited >= waitMillis) {
        return yield* lockError(
          `gave up waiting for the token lock file ${lockPath} after ${(waited / 1000).toFixed(1)} s: another ` +
            `process holds it (a lock whose holder died is taken over; an unreadable one after ${ttlMillis / 1000} s)`
        )
      }
      const pause = Math.max(1, Math.min(Math.round(20 + 40 * (yield* Random.next)), waitMillis - waited))
      yield* Effect.interruptible(Effect.sleep(Duration.millis(pause)))
    }
  })

  const ours = (holder: Holder) =>
    Effect.map(readLock, (text) => Option.exists(text, (t) => parseHolder(t)?.owner === holder.owner))

  /** Keeps the lock alive while held (touches its mtime); a lock lost to another owner is left to it. */
  const heartbeat = (holder: Holder) =>
    Effect.forever(
      Effect.zipRight(
        Effect.sleep(Duration.millis(beatMillis)),
        Effect.flatMap(Effect.zip(ours(holder), Clock.currentTimeMillis), ([mine, now]) =>
          mine
            ? Effect.ignore(fs.utimes(lockPath, new Date(now), new Date(now)))
            : Effect.logWarning(`lost the token lock file ${lockPath}: another process may renew too`)
        )
      )
    )

  /** Never fails: a lock that cannot be removed is stale after its ttl. */
  const release = (holder: Holder) =>
    Effect.flatMap(ours(holder), (mine) => (mine ? fs.remove(lockPath) : Effect.void)).pipe(
      Effect.catchAll((cause) =>
        Effect.logWarning(`cannot remove the token lock file ${lockPath}: ${describeCause(cause)}`)
      )
    )

  return <A, E, R>(use: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenCacheError, R> =>
    Effect.acquireUseRelease(
      acquire,
      (holder) => Effect.flatMap(Effect.fork(heartbeat(holder)), (beat) => Effect.ensuring(use, Fiber.interrupt(beat))),
      release
    )
}
