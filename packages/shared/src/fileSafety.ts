/**
 * What the file and directory caches trust, and how they read (docs/decisions.md, 28.3 and 28.5), for both lines:
 * - a file is read only through `O_NOFOLLOW | O_NONBLOCK` (a link is never followed, a FIFO never blocks) and judged
 *   on the very inode that was opened (`fstat`): a regular file, owned by us or root, that no other user can write;
 * - a directory is trusted when it is ours (or root's) and no other user can write it (the CLI tightens its own);
 * - a process is provably gone only when it ran on this host (boot id) in this PID namespace and `kill(pid, 0)`
 *   says ESRCH; anywhere else only a lock's TTL decides.
 * Also the Node implementation of the operations of `fileOps.ts` (the Effect 4 line runs on it; the Effect 3 line
 * uses its `read`, `rmdir` and `statDir`).
 */
import { createHash, randomBytes } from "node:crypto"
import { constants, readFileSync, readlinkSync, type Stats } from "node:fs"
import * as Fs from "node:fs/promises"
import { hostname } from "node:os"
import { dirname, resolve } from "node:path"
import { inCloudflareWorker, workerFileProblem } from "./workers.js"
import { type DirectoryStat, FileFailure, type Found, type Op, PortError, type Program, statDir } from "./fileOps.js"
import { describeCause } from "./redact.js"

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

/** Who writes a lock or a claim: `ns` says where its pid means something (absent when unknown). */
export interface Identity {
  readonly pid: number
  readonly host: string
  readonly ns: string | undefined
}

/** Computed on first use, once: reading `/proc` and hashing at import would cost every app that never locks a file. */
const once = <A>(make: () => A): (() => A) => {
  let made: { readonly value: A } | undefined
  return () => {
    made ??= { value: make() }
    return made.value
  }
}

const hostOnce = once(hostname)
const nsOnce = once(namespace)

/** This process (`host` and `ns` read on first use; spreading it reads them). */
export const self: Identity = {
  pid: process.pid,
  get host() {
    return hostOnce()
  },
  get ns() {
    return nsOnce()
  }
}

/** A short tag of this host and namespace, for the names of temp files (a sweep can tell whose they are). */
export const selfTag: () => string = once(() =>
  createHash("sha256")
    .update(self.ns ?? `unknown/${self.host}`)
    .digest("hex")
    .slice(0, 8)
)

/** A fresh name part: `<tag>-<pid>-<random>` (only `[0-9a-z-]`). */
export const uniqueId = (): string => `${selfTag()}-${process.pid.toString(36)}-${randomBytes(6).toString("hex")}`

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

/** Whether a temp id was made by a process of this host and namespace that is gone. */
export const tempWriterGone = (id: string): boolean => {
  const [tag, pid] = id.split("-")
  if (tag !== selfTag() || pid === undefined) return false
  const value = Number.parseInt(pid, 36)
  return Number.isSafeInteger(value) && value !== process.pid && processGone(value)
}

/**
 * Whether the process `who` is provably gone: same host, same PID namespace (so its pid means the same process
 * here), not this process, and no process has its pid. A lock written by another container with the same host
 * name, or by a version that did not record its namespace, is never judged gone this way.
 */
export const holderGone = (who: Partial<Identity>): boolean =>
  self.ns !== undefined &&
  who.ns === self.ns &&
  who.host === self.host &&
  typeof who.pid === "number" &&
  who.pid !== process.pid &&
  processGone(who.pid)

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

/**
 * The directory of a cache, checked: fails "config" naming it and the fix when another user can write it or owns
 * it. A directory that does not exist yet is fine ("missing": it is created 0700).
 */
export function* checkDirectory(dir: string): Program<"checked" | "missing"> {
  let stat: DirectoryStat | undefined
  try {
    stat = yield* statDir(dir)
  } catch {
    return "missing"
  }
  if (stat === undefined) return "missing"
  const me = uid()
  const verdict = directoryVerdict(stat, me)
  if (!stat.isDirectory || verdict === "ok") return "checked"
  throw new FileFailure(
    "config",
    `cannot use the token cache directory ${dir}${stat.resolved === undefined ? "" : ` (the link resolves to ${stat.resolved})`}: ` +
      `${directoryProblem(stat, me)}, so another user could plant or swap the token files in it; ${directoryAdvice(
        stat,
        verdict,
        dir
      )}`
  )
}

/**
 * What to do about a refused directory: `chmod 700` only for a directory of ours that is not shared; a shared
 * directory (the sticky bit, as on /tmp) or another user's must never be chmod-ed: a private directory instead.
 */
const directoryAdvice = (stat: DirectoryStat, verdict: "tighten" | "refuse", dir: string) =>
  verdict === "tighten" && stat.resolved === undefined
    ? `use a directory only you can write (chmod 700 ${dir}, or another path)`
    : "do not change its permissions; use a private directory instead, one only you can write (for example " +
      "~/.config/my-app/tokens.json: a missing directory is created with mode 0700)"

/**
 * A cache path that names a place: not empty, no NUL, not the file system root. A relative path is relative to the
 * working directory, as for any file. Throws a "config" {@link FileFailure}.
 */
export const checkPath = (name: string, path: unknown, kind: "file" | "directory"): string => {
  if (inCloudflareWorker()) throw new FileFailure("config", workerFileProblem(name))
  if (typeof path !== "string" || path.trim() === "") {
    throw new FileFailure(
      "config",
      `${name} takes a non-empty path, got ${typeof path === "string" ? "an empty string" : typeof path}`
    )
  }
  if (path.includes("\u0000")) throw new FileFailure("config", `${name}: the path contains a NUL character`)
  const full = resolve(path)
  if (full === dirname(full) || (kind === "file" && /(^|\/)\.{0,2}\/*$/.test(path))) {
    throw new FileFailure(
      "config",
      `${name}: ${JSON.stringify(path)} is ${kind === "file" ? "not a file name" : "the file system root"}; ` +
        `give a ${kind} such as ${kind === "file" ? "~/.config/my-app/tokens.json" : "/var/lib/my-app/tokens"}`
    )
  }
  return path
}

const kindOf = (stat: Stats) =>
  stat.isSymbolicLink()
    ? "a symbolic link"
    : stat.isDirectory()
      ? "a directory"
      : stat.isFIFO()
        ? "a FIFO"
        : stat.isSocket()
          ? "a socket"
          : "not a regular file"

/** The largest entry (or lock) a reader accepts, in bytes: a longer file reads as cut short (as none). */
export const MAX_ENTRY_BYTES = 1 << 20
const MAX_BYTES = MAX_ENTRY_BYTES

const foreign = (path: string, stat: { readonly mode: number; readonly uid: number }, me: number) =>
  new FileFailure(
    "config",
    `refusing the token cache file ${path}: ${
      trustedOwner(stat.uid, me)
        ? `other users can write to it (mode ${octal(stat.mode)})`
        : `it belongs to another user (uid ${stat.uid})`
    }; it was not written by this program. Remove it (and make its directory yours alone: chmod 700)`
  )

const trusted = (stat: { readonly mode: number; readonly uid: number }, me: number | undefined) =>
  me === undefined || (trustedOwner(stat.uid, me) && (stat.mode & 0o022) === 0)

const irregular = (stat: Stats): Found => ({
  _tag: "Irregular",
  kind: kindOf(stat),
  id: `x${stat.dev}x${stat.ino}`,
  mtimeMs: stat.mtimeMs
})

/**
 * Reads `path` without following a link and without blocking, judging the opened inode: missing, irregular (with
 * its kind), or a regular file's text. A file another user owns or can write throws a "config" FileFailure; an I/O
 * error throws a "cache" one.
 */
export const readFound = async (path: string): Promise<Found> => {
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
    if (!trusted(stat, me) && !stat.isSymbolicLink()) throw foreign(path, stat, me!)
    if (stat.isFile()) throw ioError(path, error)
    return irregular(stat)
  }
  try {
    const stat = await handle.stat()
    if (!trusted(stat, me)) throw foreign(path, stat, me!)
    if (!stat.isFile()) return irregular(stat)
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
  } catch (error) {
    throw error instanceof FileFailure ? error : ioError(path, error)
  } finally {
    await handle.close()
  }
}

const ioError = (path: string, cause: unknown) =>
  new FileFailure("cache", `cannot read the token cache file ${path}: ${describeCause(cause)}`, cause)

/** A Node error as a {@link PortError} (its errno name kept). */
export const portError = (error: unknown): PortError =>
  error instanceof PortError || error instanceof FileFailure
    ? (error as PortError)
    : new PortError(String((error as NodeJS.ErrnoException)?.code ?? "EIO"), describeCause(error), error)

/**
 * The directory `path` resolves to, for {@link checkDirectory}: symbolic links are followed (a link to another
 * user's world-writable directory is judged as that directory, and `resolved` names it); undefined when missing.
 */
export const statDirectory = async (path: string): Promise<DirectoryStat | undefined> => {
  try {
    const link = await Fs.lstat(path)
    const stat = link.isSymbolicLink() ? await Fs.stat(path) : link
    const resolved = link.isSymbolicLink() ? await Fs.realpath(path) : undefined
    return {
      isDirectory: stat.isDirectory(),
      mode: stat.mode,
      uid: stat.uid,
      ...(resolved === undefined ? {} : { resolved })
    }
  } catch (error) {
    // missing, or a dangling link: created (or refused) when written
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

/**
 * The operations of `fileOps.ts` on `node:fs` (all but `clock`, `sleep` and `warn`, which are each line's). Fails
 * with a {@link PortError} (or the "config"/"cache" FileFailure of `read`).
 */
export const nodeOperation = async (op: Op): Promise<unknown> => {
  try {
    switch (op._tag) {
      case "read":
        return await readFound(op.path)
      case "writeNew":
        return await Fs.writeFile(op.path, op.text, { flag: "wx", mode: 0o600 })
      case "link":
        return await Fs.link(op.from, op.to)
      case "rename":
        return await Fs.rename(op.from, op.to)
      case "remove":
        return await (op.recursive ? Fs.rm(op.path, { recursive: true }) : Fs.unlink(op.path))
      case "rmdir":
        return await Fs.rmdir(op.path)
      case "mkdir":
        return await Fs.mkdir(op.path, { recursive: op.recursive, mode: 0o700 })
      case "readdir":
        return await Fs.readdir(op.path)
      case "touch": {
        const now = new Date()
        return await Fs.utimes(op.path, now, now)
      }
      case "exists":
        return await Fs.lstat(op.path).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code === "ENOENT") return false
            throw error
          }
        )
      case "mtime":
        return (await Fs.stat(op.path)).mtimeMs
      case "fileTime":
        // the one reading of the wall clock in the file protocol: the clock mtimes are stamped with (see fileOps.ts)
        return Date.now()
      case "statDir":
        return await statDirectory(op.path)
      default:
        throw new PortError("ENOSYS", `not a file-system operation: ${op._tag}`)
    }
  } catch (error) {
    throw portError(error)
  }
}
