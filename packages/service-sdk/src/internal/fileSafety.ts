/**
 * What the file and directory caches trust, and how they read (see docs/decisions.md, issue 28):
 * - a file is read only through `O_NOFOLLOW | O_NONBLOCK` (a link is never followed, a FIFO never blocks) and judged
 *   on the very inode that was opened (`fstat`): a regular file, owned by us or root, that no other user can write;
 * - a directory is trusted when it is ours (or root's) and no other user can write it (the CLI tightens its own);
 * - a process is provably gone only when it ran on this host (boot id) in this PID namespace and `kill(pid, 0)`
 *   says ESRCH; anywhere else only a lock's TTL decides.
 */
import { createHash, randomBytes } from "node:crypto"
import { constants, readFileSync, readlinkSync } from "node:fs"
import * as Fs from "node:fs/promises"
import { hostname } from "node:os"
import { dirname, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { ConfigurationError, TokenCacheError } from "../ServiceError.js"
import { describeCause, safeCause } from "./redact.js"

const readOr = (read: () => string): string | undefined => {
  try {
    return read().trim()
  } catch {
    return undefined
  }
}

/** This host and PID namespace: on Linux the boot id and the PID namespace's inode; elsewhere platform and host. */
const namespace = (): string | undefined => {
  if (process.platform !== "linux") return `${process.platform}/${hostname()}`
  const boot = readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8"))
  const pidNs = readOr(() => readlinkSync("/proc/self/ns/pid"))
  return boot === undefined || pidNs === undefined ? undefined : `${boot}/${pidNs}`
}

/**
 * Who writes a lock or a claim: `ns` says where its pid means something (absent when unknown).
 */
export interface Identity {
  readonly pid: number
  readonly host: string
  readonly ns: string | undefined
}

let identity: { readonly self: Identity; readonly tag: string } | undefined

/** This process's identity and tag, found on first use (file reads and a hash: not at import). */
const mine = () => {
  if (identity === undefined) {
    const self: Identity = { pid: process.pid, host: hostname(), ns: namespace() }
    // a short tag of this host and namespace, for the names of temp files (a sweep can tell whose they are)
    const tag = createHash("sha256")
      .update(self.ns ?? `unknown/${self.host}`)
      .digest("hex")
      .slice(0, 8)
    identity = { self, tag }
  }
  return identity
}

/** Who this process is, as written into a lock or a claim. */
export const self = (): Identity => mine().self

/** A fresh name part: `<tag>-<pid>-<random>` (only `[0-9a-z-]`). */
export const uniqueId = (): string => `${mine().tag}-${process.pid.toString(36)}-${randomBytes(6).toString("hex")}`

/** Whether a temp id was made by a process of this host and namespace that is gone. */
export const tempWriterGone = (id: string): boolean => {
  const [tag, pid] = id.split("-")
  if (tag !== mine().tag || pid === undefined) return false
  const value = Number.parseInt(pid, 36)
  return Number.isSafeInteger(value) && value !== process.pid && processGone(value)
}

/** `kill(pid, 0)`: ESRCH means gone; EPERM means alive (another user's). */
const processGone = (pid: number): boolean => {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}

/**
 * Whether the process `who` is provably gone: same host, same PID namespace (so its pid means the same process
 * here), not this process, and no process has its pid. A lock written by another container with the same host
 * name, or by a version that did not record its namespace, is never judged gone this way.
 */
export const holderGone = (who: Partial<Identity>): boolean => {
  const me = self()
  return (
    me.ns !== undefined &&
    who.ns === me.ns &&
    who.host === me.host &&
    typeof who.pid === "number" &&
    who.pid !== process.pid &&
    processGone(who.pid)
  )
}

const uid = (): number | undefined => process.getuid?.()

/** Owners we trust: ourselves and root. */
const trustedOwner = (owner: number, me: number) => owner === me || owner === 0

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/**
 * What to do with a directory others may write (group or world): "ok" when nobody else can; "tighten" when it is
 * ours (its owner may chmod it); "refuse" when it is someone else's or a shared directory (the sticky bit, as on /tmp:
 * never chmod a shared directory). A directory of another user (root aside) is refused even when closed.
 */
export const directoryVerdict = (
  stat: { readonly mode: number; readonly uid: number },
  me: number | undefined
): "ok" | "tighten" | "refuse" => {
  const ours = me === undefined || trustedOwner(stat.uid, me)
  if ((stat.mode & 0o022) === 0) return ours ? "ok" : "refuse"
  if ((stat.mode & 0o1000) !== 0) return "refuse"
  return me === undefined || stat.uid === me ? "tighten" : "refuse"
}

/** Why a directory is refused, in words (with its mode). */
export const directoryProblem = (stat: { readonly mode: number; readonly uid: number }, me: number | undefined) =>
  (stat.mode & 0o022) === 0
    ? `it belongs to another user (uid ${stat.uid})`
    : `other users can write to it (mode ${octal(stat.mode)})${
        (stat.mode & 0o1000) !== 0
          ? " and it is a shared directory"
          : me !== undefined && stat.uid !== me
            ? ` and it is not yours (uid ${stat.uid})`
            : ""
      }`

export const configError = (message: string) => new ConfigurationError({ message })

/**
 * The directory of a cache, checked: a ConfigurationError naming it and the fix when another user can write it or
 * owns it. A directory that does not exist yet is fine ("missing": it is created 0700).
 */
export const checkDirectory = (dir: string): Effect.Effect<"checked" | "missing", ConfigurationError> =>
  Effect.tryPromise(() => Fs.stat(dir)).pipe(
    Effect.matchEffect({
      onFailure: () => Effect.succeed("missing" as const),
      onSuccess: (stat) => {
        const me = uid()
        if (!stat.isDirectory() || directoryVerdict(stat, me) === "ok") return Effect.succeed("checked" as const)
        return Effect.fail(
          configError(
            `cannot use the token cache directory ${dir}: ${directoryProblem(stat, me)}, so another user could ` +
              `plant or swap the token files in it; use a directory only you can write (chmod 700 ${dir}, or another path)`
          )
        )
      }
    })
  )

/**
 * A cache path that names a place: not empty, no NUL, not the file system root. A relative path is relative to the
 * working directory, as for any file.
 */
export const checkPath = (name: string, path: unknown, kind: "file" | "directory"): string => {
  if (typeof path !== "string" || path.trim() === "") {
    throw configError(
      `${name} takes a non-empty path, got ${typeof path === "string" ? "an empty string" : typeof path}`
    )
  }
  if (path.includes("\u0000")) throw configError(`${name}: the path contains a NUL character`)
  const full = resolve(path)
  if (full === dirname(full) || (kind === "file" && /(^|\/)\.{0,2}\/*$/.test(path))) {
    throw configError(
      `${name}: ${JSON.stringify(path)} is ${kind === "file" ? "not a file name" : "the file system root"}; ` +
        `give a ${kind} such as ${kind === "file" ? "~/.config/my-app/tokens.json" : "/var/lib/my-app/tokens"}`
    )
  }
  return path
}

/**
 * {@link checkPath} in the error channel. The one-argument constructors are typed without an error (DESIGN section 3),
 * so there it travels untyped; it is a ServiceError all the same (`Effect.catchTag` catches it).
 */
export const checkedPath = (name: string, path: string, kind: "file" | "directory") =>
  Effect.try({ try: () => checkPath(name, path, kind), catch: (error) => error as ConfigurationError })

/** What a name holds. */
export type Found =
  | { readonly _tag: "Missing" }
  /** not a regular file (a link, a directory, a FIFO, a socket): `id` tells one from another */
  | { readonly _tag: "Irregular"; readonly kind: string; readonly id: string; readonly mtimeMs: number }
  | { readonly _tag: "File"; readonly text: string; readonly mtimeMs: number; readonly id: string }

const kindOf = (stat: import("node:fs").Stats) =>
  stat.isSymbolicLink()
    ? "a symbolic link"
    : stat.isDirectory()
      ? "a directory"
      : stat.isFIFO()
        ? "a FIFO"
        : stat.isSocket()
          ? "a socket"
          : "not a regular file"

const MAX_BYTES = 1 << 20

const ioError = (path: string, cause: unknown) =>
  new TokenCacheError({
    message: `cannot read the token cache file ${path}: ${describeCause(cause)}`,
    cause: safeCause(cause)
  })

const foreign = (path: string, stat: { readonly mode: number; readonly uid: number }, me: number) =>
  configError(
    `refusing the token cache file ${path}: ${
      trustedOwner(stat.uid, me)
        ? `other users can write to it (mode ${octal(stat.mode)})`
        : `it belongs to another user (uid ${stat.uid})`
    }; it was not written by this program. Remove it (and make its directory yours alone: chmod 700)`
  )

const trusted = (stat: { readonly mode: number; readonly uid: number }, me: number | undefined) =>
  me === undefined || (trustedOwner(stat.uid, me) && (stat.mode & 0o022) === 0)

/**
 * Reads `path` without following a link and without blocking, judging the opened inode: missing, irregular (with
 * its kind), or a regular file's text. A file another user owns or can write is a ConfigurationError.
 */
export const readFile = (path: string): Effect.Effect<Found, TokenCacheError | ConfigurationError> =>
  Effect.tryPromise({
    try: async (): Promise<Found | ConfigurationError> => {
      const me = uid()
      let handle: Fs.FileHandle
      try {
        handle = await Fs.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === "ENOENT") return { _tag: "Missing" }
        // a link (ELOOP), a socket (ENXIO), or unreadable (EACCES): judged by what the name itself is
        const stat = await Fs.lstat(path).catch(() => undefined)
        if (stat === undefined) return { _tag: "Missing" }
        if (!trusted(stat, me) && !stat.isSymbolicLink()) return foreign(path, stat, me!)
        if (stat.isFile()) throw error
        return { _tag: "Irregular", kind: kindOf(stat), id: `x${stat.dev}x${stat.ino}`, mtimeMs: stat.mtimeMs }
      }
      try {
        const stat = await handle.stat()
        if (!trusted(stat, me)) return foreign(path, stat, me!)
        if (!stat.isFile()) {
          return { _tag: "Irregular", kind: kindOf(stat), id: `x${stat.dev}x${stat.ino}`, mtimeMs: stat.mtimeMs }
        }
        const buffer = Buffer.alloc(Math.min(stat.size + 1, MAX_BYTES))
        let length = 0
        while (length < buffer.length) {
          const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
          if (bytesRead === 0) break
          length += bytesRead
        }
        return {
          _tag: "File",
          text: buffer.toString("utf8", 0, length),
          mtimeMs: stat.mtimeMs,
          id: `x${stat.dev}x${stat.ino}`
        }
      } finally {
        await handle.close()
      }
    },
    catch: (cause) => ioError(path, cause)
  }).pipe(Effect.flatMap((found) => (found instanceof ConfigurationError ? Effect.fail(found) : Effect.succeed(found))))

/** `rmdir`: removes an empty directory only ("NotEmpty" when it is not, "Missing" when it is gone). */
export const removeEmptyDirectory = (
  path: string
): Effect.Effect<"Removed" | "NotEmpty" | "Missing", TokenCacheError> =>
  Effect.tryPromise({
    try: () =>
      Fs.rmdir(path).then(
        () => "Removed" as const,
        (error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT") return "Missing" as const
          if (error.code === "ENOTEMPTY" || error.code === "EEXIST") return "NotEmpty" as const
          throw error
        }
      ),
    catch: (cause) =>
      new TokenCacheError({
        message: `cannot remove the directory ${path}: ${describeCause(cause)}`,
        cause: safeCause(cause)
      })
  })
