// Copied from packages/shared/src/fileOps.ts by scripts/shared.mjs: edit the original there, then `npm run shared`.
/**
 * The file protocol of the token caches (`fileCas`, `fileLock`, `fileEntry`) is written once, for both Effect lines,
 * as programs: generators that yield the file-system operations below and get their results back. Each line runs a
 * program with its own interpreter (Effect 3 over `@effect/platform`'s `FileSystem`, Effect 4 over `node:fs`), so a
 * program keeps that line's semantics: its `Clock` and `sleep` (TestClock), interruption between any two steps
 * (a program's `finally` blocks still run: the interpreter resumes it with `return`), and its logger.
 *
 * An operation that fails throws a {@link PortError} (an errno `code`) into the program at its `yield`; a program
 * fails with a {@link FileFailure} ("cache": TokenCacheError, "config": ConfigurationError).
 */

/** What a name holds, judged on the opened inode (see `fileSafety.readFound`). */
export type Found =
  | { readonly _tag: "Missing" }
  /** not a regular file (a link, a directory, a FIFO, a socket): `id` tells one from another */
  | { readonly _tag: "Irregular"; readonly kind: string; readonly id: string; readonly mtimeMs: number }
  | { readonly _tag: "File"; readonly text: string; readonly mtimeMs: number; readonly id: string }

/** A directory's owner and mode (`lstat`), for the trust check. */
export interface DirectoryStat {
  readonly isDirectory: boolean
  readonly mode: number
  readonly uid: number
}

/** The operations a program may yield, with what each returns. */
export type Op =
  /** open `O_RDONLY|O_NOFOLLOW|O_NONBLOCK` + fstat + read → {@link Found} (a file another user can write fails "config") */
  | { readonly _tag: "read"; readonly path: string }
  /** create a new file (`wx`, 0600) holding `text` → void */
  | { readonly _tag: "writeNew"; readonly path: string; readonly text: string }
  /** `link(2)`: EEXIST when `to` exists → void */
  | { readonly _tag: "link"; readonly from: string; readonly to: string }
  /** `rename(2)` → void */
  | { readonly _tag: "rename"; readonly from: string; readonly to: string }
  /** unlink a file, or with `recursive` a tree → void (ENOENT when missing) */
  | { readonly _tag: "remove"; readonly path: string; readonly recursive: boolean }
  /** `rmdir(2)`: an empty directory only (ENOTEMPTY, ENOENT) → void */
  | { readonly _tag: "rmdir"; readonly path: string }
  /** `mkdir` with mode 0700 → void */
  | { readonly _tag: "mkdir"; readonly path: string; readonly recursive: boolean }
  /** the names in a directory → ReadonlyArray<string> */
  | { readonly _tag: "readdir"; readonly path: string }
  /** set atime and mtime to now → void */
  | { readonly _tag: "touch"; readonly path: string }
  /** whether a name exists → boolean */
  | { readonly _tag: "exists"; readonly path: string }
  /** a name's mtime in ms (`stat`) → number */
  | { readonly _tag: "mtime"; readonly path: string }
  /** `lstat` of a directory → DirectoryStat | undefined (missing) */
  | { readonly _tag: "statDir"; readonly path: string }
  /** the line's clock in ms (its `Clock`: TestClock in tests) → number */
  | { readonly _tag: "clock" }
  /**
   * the time the file system stamps mtimes with, in ms → number: staleness compares mtimes with it, so it is the
   * operating system's wall clock, not the line's `Clock` (under TestClock that starts at 0 and every mtime would look
   * a lifetime ahead); waits and timeouts use `clock`
   */
  | { readonly _tag: "fileTime" }
  /** the line's sleep (interruptible) → void */
  | { readonly _tag: "sleep"; readonly millis: number }
  /** a warning in the line's logger → void */
  | { readonly _tag: "warn"; readonly message: string }

/** A program of the file protocol: run by each line's interpreter. */
export type Program<A> = Generator<Op, A, unknown>

/** A file-system operation that failed: `code` is the errno name (ENOENT, EEXIST, ENOTEMPTY, ...). */
export class PortError extends Error {
  constructor(
    readonly code: string,
    message: string,
    override readonly cause?: unknown
  ) {
    super(message)
    this.name = "PortError"
  }
}

/** How a program fails: "cache" is a TokenCacheError, "config" a ConfigurationError (each line maps it). */
export class FileFailure extends Error {
  constructor(
    readonly kind: "cache" | "config",
    message: string,
    override readonly cause?: unknown
  ) {
    super(message)
    this.name = "FileFailure"
  }
}

/** Whether `error` is a failed operation with errno `code`. */
export const isCode = (error: unknown, ...codes: ReadonlyArray<string>): boolean =>
  error instanceof PortError && codes.includes(error.code)

function* perform<A>(op: Op): Program<A> {
  return (yield op) as A
}

export const read = (path: string) => perform<Found>({ _tag: "read", path })
export const writeNew = (path: string, text: string) => perform<void>({ _tag: "writeNew", path, text })
export const link = (from: string, to: string) => perform<void>({ _tag: "link", from, to })
export const rename = (from: string, to: string) => perform<void>({ _tag: "rename", from, to })
export const remove = (path: string, recursive = false) => perform<void>({ _tag: "remove", path, recursive })
export const rmdir = (path: string) => perform<void>({ _tag: "rmdir", path })
export const mkdir = (path: string, recursive: boolean) => perform<void>({ _tag: "mkdir", path, recursive })
export const readdir = (path: string) => perform<ReadonlyArray<string>>({ _tag: "readdir", path })
export const touch = (path: string) => perform<void>({ _tag: "touch", path })
export const exists = (path: string) => perform<boolean>({ _tag: "exists", path })
export const mtime = (path: string) => perform<number>({ _tag: "mtime", path })
export const statDir = (path: string) => perform<DirectoryStat | undefined>({ _tag: "statDir", path })
export const clock = () => perform<number>({ _tag: "clock" })
export const fileTime = () => perform<number>({ _tag: "fileTime" })
export const sleep = (millis: number) => perform<void>({ _tag: "sleep", millis })
export const warn = (message: string) => perform<void>({ _tag: "warn", message })

/** Runs `program`; a failed operation is ignored (best effort: sweeps, temp files). */
export function* ignore(program: Program<unknown>): Program<void> {
  try {
    yield* program
  } catch (error) {
    if (!(error instanceof PortError || error instanceof FileFailure)) throw error
  }
}
