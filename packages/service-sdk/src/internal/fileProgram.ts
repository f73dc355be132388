/**
 * Runs the shared file protocol (`shared/fileOps.ts`: one implementation for both lines) on this line's
 * `@effect/platform` `FileSystem`: every write, link, rename and removal goes through it (what the delay tests
 * wrap); reads use `node:fs` directly (`FileSystem` has no `O_NOFOLLOW`), and so do `rmdir` and `lstat`.
 * Time and pauses are Effect's (`Clock`, `sleep`), warnings go to the fiber's logger, and an interrupted program
 * still runs its `finally` blocks (its temp files removed).
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ConfigurationError, TokenCacheError } from "../ServiceError.js"
import { describeCause, safeCause } from "@service-sdk/shared/redact"
import { FileFailure, type Op, PortError, type Program } from "@service-sdk/shared/fileOps"
import { checkPath as check, nodeOperation, portError } from "@service-sdk/shared/fileSafety"

export type FileError = TokenCacheError | ConfigurationError

/** A program's failure as this line's error. */
export const toError = (error: unknown): FileError =>
  error instanceof FileFailure && error.kind === "config"
    ? new ConfigurationError({ message: error.message })
    : error instanceof FileFailure
      ? new TokenCacheError({
          message: error.message,
          ...(error.cause === undefined ? {} : { cause: safeCause(error.cause) })
        })
      : new TokenCacheError({ message: `token cache file: ${describeCause(error)}`, cause: safeCause(error) })

const REASONS: Record<string, string> = { NotFound: "ENOENT", AlreadyExists: "EEXIST", PermissionDenied: "EACCES" }

/** A `PlatformError` as the errno-named failure the protocol understands. */
const fromPlatform = (error: unknown): PortError => {
  const reason = (error as { reason?: string })?.reason
  const code = (error as { cause?: { code?: unknown } })?.cause?.code
  return new PortError(
    typeof code === "string" ? code : (REASONS[reason ?? ""] ?? String(reason ?? "EIO")),
    describeCause(error),
    error
  )
}

const node = (op: Op) =>
  Effect.tryPromise({
    try: () => nodeOperation(op),
    catch: (error) => (error instanceof FileFailure ? error : portError(error))
  })

const operation = (fs: FileSystem.FileSystem, op: Op): Effect.Effect<unknown, unknown> => {
  const platform = <A, E>(self: Effect.Effect<A, E>) => Effect.mapError(self, fromPlatform)
  switch (op._tag) {
    case "writeNew":
      return platform(fs.writeFileString(op.path, op.text, { flag: "wx", mode: 0o600 }))
    case "link":
      return platform(fs.link(op.from, op.to))
    case "rename":
      return platform(fs.rename(op.from, op.to))
    case "remove":
      return platform(fs.remove(op.path, { recursive: op.recursive }))
    case "mkdir":
      return platform(fs.makeDirectory(op.path, { recursive: op.recursive, mode: 0o700 }))
    case "readdir":
      return platform(fs.readDirectory(op.path))
    case "touch":
      return Effect.suspend(() => {
        const now = new Date()
        return platform(fs.utimes(op.path, now, now))
      })
    case "exists":
      return platform(fs.exists(op.path))
    case "mtime":
      // a platform that reports no mtime: node's own stat
      return Effect.flatMap(platform(fs.stat(op.path)), (info) =>
        info.mtime._tag === "Some" ? Effect.succeed(info.mtime.value.getTime()) : node(op)
      )
    case "clock":
      return Clock.currentTimeMillis
    case "sleep":
      return Effect.interruptible(Effect.sleep(Duration.millis(op.millis)))
    case "warn":
      return Effect.logWarning(op.message)
    default:
      return node(op)
  }
}

/** Runs a program of the shared file protocol on `fs`. */
export const run = <A>(fs: FileSystem.FileSystem, program: () => Program<A>): Effect.Effect<A, FileError> =>
  Effect.suspend(() => {
    const it = program()
    let ended = false
    const step = (resume: () => IteratorResult<unknown, A>): Effect.Effect<A, FileError> => {
      let result: IteratorResult<unknown, A>
      try {
        result = resume()
      } catch (error) {
        ended = true
        return Effect.fail(toError(error))
      }
      if (result.done === true) {
        ended = true
        return Effect.succeed(result.value)
      }
      return Effect.matchEffect(operation(fs, result.value as Op), {
        onFailure: (error) => step(() => it.throw(error)),
        onSuccess: (value) => step(() => it.next(value))
      })
    }
    // interrupted at a step: the program's `finally` blocks run (uninterruptibly) before the fiber ends
    return Effect.onInterrupt(
      step(() => it.next()),
      () => (ended ? Effect.void : Effect.ignore(step(() => it.return(undefined as A))))
    )
  })

/**
 * A cache path that names a place (not empty, not the root), checked: a ConfigurationError otherwise (thrown, for
 * the plain constructors).
 */
export const checkPath = (name: string, path: unknown, kind: "file" | "directory"): string => {
  try {
    return check(name, path, kind)
  } catch (error) {
    throw toError(error)
  }
}

/**
 * {@link checkPath} in the error channel. The one-argument constructors are typed without an error (DESIGN section 3),
 * so there it travels untyped; it is a ServiceError all the same (`Effect.catchTag` catches it).
 */
export const checkedPath = (name: string, path: string, kind: "file" | "directory") =>
  Effect.try({ try: () => checkPath(name, path, kind), catch: (error) => error as ConfigurationError })
